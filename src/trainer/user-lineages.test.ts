import { describe, expect, it } from 'vitest';
import { createFakeTrainingEngine } from '../engines/testing/fake-training-engine.js';
import { createScriptedInferenceEngine } from '../gateway/testing/scripted-inference-engine.js';
import { createPolicyServing } from '../serving/policy-serving.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { createTrainer, type TrainerOptions } from './create-trainer.js';
import { perUserTrainer, recordingLineages, recordSamplesOf, silent, type LineageCall } from './testing/per-user-trainer.js';
import { withTrainingLineages } from '../engines/training-lineages.js';
import type { ForwardBackwardInput, TrainingEngine } from '../spec/training-engine.js';
import type { PolicyServing } from '../serving/policy-serving.js';

/** Log-probs of `input` under a fresh engine at `version`'s weights (the base for 0). */
async function logprobsAt(serving: PolicyServing, version: number, input: ForwardBackwardInput): Promise<number[][]> {
  const engine = createFakeTrainingEngine();
  if (version !== 0) await engine.resetWeights(await serving.artifactOf(version));
  return (await engine.forwardBackward(input)).logprobs;
}

const lastOf = <Call extends LineageCall['call']>(calls: LineageCall[], call: Call) =>
  calls.filter((entry): entry is Extract<LineageCall, { call: Call }> => entry.call === call).at(-1);

describe('createTrainer with policyScope user', () => {
  it('trains each user\'s lineage on that user\'s samples alone, from the base, and commits versions the user owns', async () => {
    const { store, trainer, changes, advance } = await perUserTrainer();
    await recordSamplesOf(store, 'acme/ann', 4);
    await recordSamplesOf(store, 'acme/bob', 4);
    const first = await trainer.trainNow();
    expect(first).toMatchObject({ kind: 'trained', step: { policyVersion: 1, samplesUsed: 4 } });
    advance(1_000);
    const second = await trainer.trainNow();
    expect(second).toMatchObject({ kind: 'trained', step: { policyVersion: 2, samplesUsed: 4 } });
    const versions = await store.listPolicyVersions();
    expect(versions.map((entry) => [entry.version, entry.user, entry.parent, entry.active])).toEqual([
      [0, null, null, true], [1, 'acme/ann', 0, true], [2, 'acme/bob', 0, true],
    ]);
    // Each step took one user's samples: ann's trained in step 1, bob's in step 2.
    const trainedBy = async (user: string) => (await store.listSamples({ status: 'trained' })).filter((sample) => sample.user === user);
    expect(new Set((await trainedBy('acme/ann')).map((sample) => sample.policyVersion))).toEqual(new Set([0]));
    expect((await trainedBy('acme/ann')).length).toBe(4);
    expect((await trainedBy('acme/bob')).length).toBe(4);
    expect(changes()).toBe(2);
    expect(await trainer.trainNow()).toEqual({ kind: 'idle' });
    await trainer.close();
    await store.close();
  });

  it('continues a user\'s lineage from its active version, and rolling one user back leaves the others alone', async () => {
    const { store, trainer, advance } = await perUserTrainer();
    await recordSamplesOf(store, 'acme/ann', 4);
    await trainer.trainNow();
    await recordSamplesOf(store, 'acme/bob', 4);
    advance(1_000);
    await trainer.trainNow();
    await recordSamplesOf(store, 'acme/ann', 4, 1);
    advance(1_000);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 3 } });
    expect((await store.listPolicyVersions({ user: 'acme/ann' })).map((entry) => [entry.version, entry.parent, entry.active])).toEqual([[1, 0, false], [3, 1, true]]);
    await trainer.activate(1, 'rolled back by a person');
    const lineages = (await store.listPolicyVersions()).map((entry) => [entry.version, entry.user, entry.state]);
    expect(lineages).toEqual([[0, null, 'active'], [1, 'acme/ann', 'active'], [2, 'acme/bob', 'active'], [3, 'acme/ann', 'rolled-back']]);
    // Ann's next step continues from version 1, the one she is served now.
    await recordSamplesOf(store, 'acme/ann', 4, 1 + 10);
    advance(1_000);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 4 } });
    expect((await store.listPolicyVersions({ user: 'acme/ann' })).at(-1)).toMatchObject({ version: 4, parent: 1, active: true });
    await expect(trainer.activate(42)).rejects.toMatchObject({ code: 'not_found' });
    await trainer.close();
    await store.close();
  });

  it('starts a user\'s lineage at the base, and after a rollback continues from the activated version\'s weights, not its latest state', async () => {
    const { engine, calls } = recordingLineages(withTrainingLineages({ first: createFakeTrainingEngine(), capacity: 1 }));
    const { store, serving, trainer, advance } = await perUserTrainer({ trainingEngine: engine });
    await recordSamplesOf(store, 'acme/ann', 4);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 1 } });
    // A first step: the lineage is neither loaded nor reset, it begins at the base.
    expect(calls.map((entry) => entry.call)).toEqual(['forwardBackward', 'optimizerStep']);
    const first = lastOf(calls, 'forwardBackward');
    expect(first?.output.logprobs).toEqual(await logprobsAt(serving, 0, first?.input ?? { data: [], loss: { name: 'importance_sampling' } }));
    await recordSamplesOf(store, 'acme/ann', 4, 1);
    advance(1_000);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 2 } });
    // Continued on its own state: nothing moved it, and the optimizer counts on.
    expect(calls.map((entry) => entry.call)).toEqual(['forwardBackward', 'optimizerStep', 'forwardBackward', 'optimizerStep']);
    expect(lastOf(calls, 'optimizerStep')?.step).toBe(2);
    await trainer.activate(1, 'rolled back');
    await recordSamplesOf(store, 'acme/ann', 4, 12);
    advance(1_000);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 3 } });
    expect(calls.filter((entry) => entry.call === 'resetWeights' || entry.call === 'loadState')).toEqual([{ lineage: 'acme/ann', call: 'resetWeights', version: 1 }]);
    const afterRollback = lastOf(calls, 'forwardBackward');
    const input = afterRollback?.input ?? { data: [], loss: { name: 'importance_sampling' } };
    expect(afterRollback?.output.logprobs).toEqual(await logprobsAt(serving, 1, input));
    expect(afterRollback?.output.logprobs).not.toEqual(await logprobsAt(serving, 2, input));
    expect((await store.listPolicyVersions({ user: 'acme/ann' })).at(-1)).toMatchObject({ version: 3, parent: 1 });
    await trainer.close();
    await store.close();
  });

  it('after a user\'s step fails, moves that lineage back to its version, so the gradients it left hold nobody else up', async () => {
    const lineages = withTrainingLineages({ first: createFakeTrainingEngine(), capacity: 1 });
    let failNext = false;
    // Ann's optimizer step fails once, after her forward-backward left gradients on the one client.
    const failing: TrainingEngine = {
      ...lineages,
      lineage(id) {
        const inner = lineages.lineage?.(id) ?? lineages;
        return { ...inner, optimizerStep: async (input) => {
          if (id === 'acme/ann' && failNext) {
            failNext = false;
            throw new Error('optimizer failed');
          }
          return inner.optimizerStep(input);
        } };
      },
    };
    const { engine, calls } = recordingLineages(failing);
    const { store, trainer, advance } = await perUserTrainer({ trainingEngine: engine });
    await recordSamplesOf(store, 'acme/ann', 4);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 1 } });
    await recordSamplesOf(store, 'acme/ann', 4, 1);
    failNext = true;
    advance(1_000);
    await expect(trainer.trainNow()).rejects.toThrow('optimizer failed');
    // Back to her version 1 from the step that made it.
    expect(calls.filter((entry) => entry.call === 'loadState').map((entry) => entry.lineage)).toEqual(['acme/ann']);
    await recordSamplesOf(store, 'acme/bob', 4);
    advance(1_000);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 2 } });
    advance(1_000);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 3 } });
    expect((await store.listPolicyVersions({ user: 'acme/ann' })).at(-1)).toMatchObject({ version: 3, parent: 1 });
    await trainer.close();
    await store.close();
  });

  it('keeps a user\'s newest ready samples within the quota and stops a user out of steps for the day', async () => {
    const { store, trainer, advance } = await perUserTrainer({ userQuotas: { samplesKept: 6, stepsPerDay: 1 } });
    await recordSamplesOf(store, 'acme/busy', 10);
    await recordSamplesOf(store, null, 4);
    // The global lineage (no user) goes first: it is named before any user.
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 1 } });
    const dropped = (await store.listSamples({ status: 'dropped' })).filter((sample) => sample.dropReason === 'user-quota');
    expect(dropped.map((sample) => sample.createdAt)).toEqual([10, 11, 12, 13]);
    advance(1_000);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 2, samplesUsed: 4 } });
    expect((await store.listPolicyVersions()).map((entry) => [entry.version, entry.user])).toEqual([[0, null], [1, null], [2, 'acme/busy']]);
    // Two of busy's samples are still ready, but its one step today is spent.
    advance(1_000);
    expect(await trainer.trainNow()).toEqual({ kind: 'idle' });
    advance(24 * 60 * 60 * 1000);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { policyVersion: 3, samplesUsed: 2 } });
    await trainer.close();
    await store.close();
  });

  it('refuses a gate or canary at creation: they are not per user', async () => {
    const store = createSqliteRecordStore({ path: ':memory:' });
    const serving = createPolicyServing({ store, engine: createScriptedInferenceEngine({}), logger: silent, now: () => 1 });
    const lifecycle = { gated: true } as unknown as NonNullable<TrainerOptions['lifecycle']>;
    expect(() => createTrainer({ store, trainingEngine: createFakeTrainingEngine(), serving, logger: silent, now: () => 1, workerId: 'w', policyScope: 'user', lifecycle })).toThrow(/--policy-scope user/);
    await store.close();
  });

  it('refuses at creation an engine without lineages: users\' weights and optimizer states would share one', async () => {
    const store = createSqliteRecordStore({ path: ':memory:' });
    const serving = createPolicyServing({ store, engine: createScriptedInferenceEngine({}), logger: silent, now: () => 1 });
    expect(() => createTrainer({ store, trainingEngine: createFakeTrainingEngine(), serving, logger: silent, now: () => 1, workerId: 'w', policyScope: 'user' })).toThrow(/has none/);
    await store.close();
  });
});
