/**
 * Per-user training on the real engines' lineages: on the local engine, more users than it keeps
 * step checkpoints train in turns and each keeps its own optimizer state (its lineage's state is
 * swapped through the worker and never pruned, so no user is moved back to its version's weights);
 * on Tinker, each user trains through a training client of its own.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalTrainingEngine } from '../engines/local/create-local-training-engine.js';
import { createTinyModelFolder } from '../engines/local/testing/create-tiny-model-folder.js';
import { createTinkerClient } from '../engines/tinker/create-tinker-client.js';
import { createTinkerTrainingEngine } from '../engines/tinker/create-tinker-training-engine.js';
import { createTinkerTestServer } from '../engines/tinker/testing/create-tinker-test-server.js';
import { lineageStatePrefix } from '../engines/training-lineages.js';
import type { Logger } from '../spec/logger.js';
import type { TrainingEngine } from '../spec/training-engine.js';
import { perUserTrainer, recordingLineages, recordSamplesOf, type LineageCall } from './testing/per-user-trainer.js';

// Worker threads run compiled JavaScript: the suite builds dist/ before the tests.
const workerUrl = new URL(path.join('..', '..', 'dist', 'engines', 'local', 'trainer-worker.js'), import.meta.url);
const folder = createTinyModelFolder();
const scratch = mkdtempSync(path.join(tmpdir(), 'clawrl-user-lineages-'));
afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/** Every user trains `rounds` steps, in turns, on the trainer over `engine`; what the lineages were asked, and the warnings. */
async function trainInTurns(engine: TrainingEngine, users: readonly string[], rounds: number) {
  const { engine: recorded, calls } = recordingLineages(engine);
  const warnings: string[] = [];
  const logger: Logger = { info: () => undefined, error: () => undefined, warn: (message) => void warnings.push(message) };
  const { store, trainer, advance } = await perUserTrainer({ trainingEngine: recorded, logger });
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const user of users) {
        const active = (await store.listPolicyVersions({ user })).find((version) => version.active)?.version ?? 0;
        await recordSamplesOf(store, user, 4, active);
      }
      for (const _ of users) {
        advance(1_000);
        expect(await trainer.trainNow()).toMatchObject({ kind: 'trained' });
      }
    }
    const versions = (await store.listPolicyVersions()).filter((version) => version.user !== null);
    return { calls, warnings, versions };
  } finally {
    await trainer.close();
    await store.close();
    await engine.close();
  }
}

const optimizerStepsOf = (calls: LineageCall[], user: string) =>
  calls.flatMap((entry) => (entry.lineage === user && entry.call === 'optimizerStep' ? [entry.step] : []));

describe('per-user training on engine lineages', () => {
  it('keeps each of five users\' optimizer state on the local engine, which keeps three step checkpoints', async () => {
    const checkpointDirectory = path.join(scratch, 'local');
    const engine = await createLocalTrainingEngine({
      modelDirectory: folder, modelId: 'tiny', checkpointDirectory, lora: { rank: 4, alpha: 8 }, optimizer: { learningRate: 1e-2 }, retainedCheckpoints: 3, workerUrl,
    });
    const users = ['acme/u1', 'acme/u2', 'acme/u3', 'acme/u4', 'acme/u5'];
    const { calls, warnings, versions } = await trainInTurns(engine, users, 2);
    expect(versions).toHaveLength(10);
    // Each user's second step continued its own optimizer (a restarted one would count 1 again), ...
    for (const user of users) expect(optimizerStepsOf(calls, user), user).toEqual([1, 2]);
    // ... without the trainer ever moving a lineage back to a version's weights or a step checkpoint.
    expect(calls.filter((entry) => entry.call === 'loadState' || entry.call === 'resetWeights')).toEqual([]);
    expect(warnings).toEqual([]);
    // The step checkpoints of all but the last three steps are pruned; the lineages' states are not.
    const folders = readdirSync(checkpointDirectory);
    expect(folders.filter((name) => name.startsWith('step-')).sort()).toEqual(['step-10', 'step-8', 'step-9']);
    expect(folders.filter((name) => name.startsWith(lineageStatePrefix)).length).toBeGreaterThanOrEqual(users.length);
    expect(existsSync(path.join(checkpointDirectory, 'step-1'))).toBe(false);
  }, 120_000);

  it('trains two users on Tinker through two training clients of their own', async () => {
    const server = await createTinkerTestServer({ modelDirectory: folder, baseModel: 'tiny', apiKey: 'tml-test', workerUrl, loraAlpha: 8 });
    try {
      const engine = await createTinkerTrainingEngine({
        client: await createTinkerClient({ url: server.url, apiKey: 'tml-test' }),
        baseModel: 'tiny', loraRank: 4, optimizer: { learningRate: 1e-2 }, maxTrainingClients: 3,
      });
      const { calls, warnings } = await trainInTurns(engine, ['acme/ann', 'acme/bob'], 2);
      expect(optimizerStepsOf(calls, 'acme/ann')).toEqual([1, 2]);
      expect(optimizerStepsOf(calls, 'acme/bob')).toEqual([1, 2]);
      expect(warnings).toEqual([]);
      // The engine's own client and one per user; each user's steps all went to its own, none was loaded into another.
      // (A step may send several passes: runs of one model are one step.)
      const trainedOn = server.received
        .filter((request) => request.path === 'forward_backward')
        .map((request) => request.modelId)
        .filter((model, index, all) => model !== all[index - 1]);
      expect(trainedOn).toHaveLength(4);
      expect(trainedOn[0]).not.toBe(trainedOn[1]);
      expect(trainedOn.slice(2)).toEqual(trainedOn.slice(0, 2));
      expect(server.received.filter((request) => request.path === 'load_weights')).toEqual([]);
      expect(server.liveModels()).toBe(0);
    } finally {
      await server.close();
    }
  }, 120_000);
});
