import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { TrainingDatum, TrainingEngine } from '../spec/training-engine.js';
import { createFakeTrainingEngine, type FakeSavedStates } from './testing/fake-training-engine.js';
import { withTrainingLineages } from './training-lineages.js';

const datum: TrainingDatum = { promptTokenIds: [1, 2], responseTokenIds: [3, 4, 3], lossMask: [1, 1, 1], advantages: [1, 1, 1], rolloutLogprobs: [-5, -5, -5], temperature: 1 };
const loss = { name: 'importance_sampling' as const };

/** One step of training; the log-probs it read before its update. */
async function train(engine: TrainingEngine): Promise<number[]> {
  const output = await engine.forwardBackward({ data: [datum], loss });
  await engine.optimizerStep();
  return output.logprobs[0] ?? [];
}

/** What `steps` steps from the base read on one engine alone, step by step. */
async function alone(steps: number): Promise<number[][]> {
  const engine = createFakeTrainingEngine();
  const reads: number[][] = [];
  for (let step = 0; step < steps; step += 1) reads.push(await train(engine));
  return reads;
}

/** Fake clients that load each other's saved states, as a Tinker service's training clients do. */
function pool(capacity: number) {
  const opened: TrainingEngine[] = [];
  const savedStates: FakeSavedStates = new Map();
  const engine = withTrainingLineages({
    first: createFakeTrainingEngine({ savedStates }),
    capacity,
    openClient: async () => {
      const client = createFakeTrainingEngine({ savedStates });
      opened.push(client);
      return client;
    },
  });
  return { engine, opened };
}

describe('withTrainingLineages', () => {
  it('trains many lineages at once through fewer clients, each exactly as it trains alone', async () => {
    const { engine, opened } = pool(2);
    const expected = await alone(3);
    const users = ['ann', 'bob', 'cem', 'dan'];
    // Every user's three steps run at once with the others': a lineage waits for a client, none fails.
    const reads = await Promise.all(
      users.map(async (user) => {
        const lineage = engine.lineage?.(user);
        if (lineage === undefined) throw new Error('no lineages');
        const own: number[][] = [];
        for (let step = 0; step < 3; step += 1) own.push(await train(lineage));
        return own;
      }),
    );
    expect(opened).toHaveLength(1);
    for (const own of reads) own.forEach((read, step) => read.forEach((value, index) => expect(value).toBeCloseTo(expected[step]?.[index] ?? Number.NaN, 10)));
    // The engine's own lineage was swapped out and back, untouched: still at the base.
    expect((await train(engine)).map((value) => value.toFixed(10))).toEqual(expected[0]?.map((value) => value.toFixed(10)));
  });

  it('refuses to train another lineage on the only client while a lineage holds gradients not yet stepped', async () => {
    const engine = withTrainingLineages({ first: createFakeTrainingEngine(), capacity: 1 });
    await engine.lineage?.('ann').forwardBackward({ data: [datum], loss });
    const refused = await engine.lineage?.('bob').forwardBackward({ data: [datum], loss }).catch((error: unknown) => error);
    expect(ClawrlError.isInstance(refused) && refused.message).toContain('gradients not yet stepped');
    await engine.lineage?.('ann').optimizerStep();
    const bob = engine.lineage?.('bob');
    if (bob === undefined) throw new Error('no lineages');
    expect(await train(bob)).toEqual((await alone(1))[0]);
    expect(() => engine.lineage?.('')).toThrow(/non-empty id/);
  });

  it('keeps a lineage on its client when saving it fails, and gives the other lineage nothing of it', async () => {
    const first = createFakeTrainingEngine();
    const engine = withTrainingLineages({ first, capacity: 1 });
    const ann = engine.lineage?.('ann');
    const bob = engine.lineage?.('bob');
    if (ann === undefined || bob === undefined) throw new Error('no lineages');
    await train(ann);
    const save = first.saveState.bind(first);
    first.saveState = async () => {
      throw new ClawrlError('upstream_error', 'the disk is full');
    };
    await expect(train(bob)).rejects.toThrow('the disk is full');
    first.saveState = save;
    // Ann was never let go: her second step continues her first.
    expect(await train(ann)).toEqual((await alone(2))[1]);
  });

  it('restores a lineage another client is still saving from that save, not from the base', async () => {
    const { engine, opened } = pool(2);
    const [ann, bob] = [engine.lineage?.('ann'), engine.lineage?.('bob')];
    if (ann === undefined || bob === undefined) throw new Error('no lineages');
    await train(ann);
    await train(engine);
    // Bob takes Ann's client (the least recently used); her save there is slow.
    const annClient = opened[0];
    if (annClient === undefined) throw new Error('no client opened');
    const save = annClient.saveState.bind(annClient);
    annClient.saveState = async (name) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return save(name);
    };
    const [, annAgain] = await Promise.all([train(bob), train(ann)]);
    expect(annAgain).toEqual((await alone(2))[1]);
  });
});
