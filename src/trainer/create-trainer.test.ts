import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalInferenceEngine } from '../engines/local/create-local-inference-engine.js';
import { createLocalTrainingEngine } from '../engines/local/create-local-training-engine.js';
import { createTinyModelFolder } from '../engines/local/testing/create-tiny-model-folder.js';
import { createFakeTrainingEngine } from '../engines/testing/fake-training-engine.js';
import { createScriptedInferenceEngine } from '../gateway/testing/scripted-inference-engine.js';
import type { InferenceEngine, PolicyArtifact } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { RecordStore } from '../spec/record-store.js';
import type { TrainingEngine, TrainingLoss } from '../spec/training-engine.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { createTrainer } from './create-trainer.js';
import { createPolicyServing } from '../serving/policy-serving.js';
import { recordSampledTurn } from './testing/sampled-turns.js';

const silent: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
let store: RecordStore;
// The loop's tests run on a fake training engine (a bigram table trained in this thread, which keeps
// the seam's promises: `fake-training-engine.test.ts`) and a scripted engine that serves what it is told.
let engine: InferenceEngine;
let trainingEngine: TrainingEngine;

/** A scripted inference engine that loads policy versions: it serves, and reports, the last one loaded. */
function createVersionServingEngine(): InferenceEngine {
  const scripted = createScriptedInferenceEngine({});
  return Object.assign(scripted, {
    capabilities: { ...scripted.capabilities, policyLoading: true },
    loadPolicy: async (artifact: PolicyArtifact) => {
      scripted.policyVersion = artifact.version;
    },
  });
}

async function servedVersion(served: InferenceEngine = engine): Promise<number> {
  const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [], toolChoice: 'auto' as const, sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: 2 } };
  for await (const event of served.generate(request, new AbortController().signal)) if (event.type === 'start') return event.policyVersion;
  throw new Error('no start event');
}

/** A fresh store with session `s`, its serving started, and a training engine that keeps each step's advantages in `trained`. */
async function advantageSpy(): Promise<{ store: RecordStore; trained: number[][]; spied: TrainingEngine; serving: ReturnType<typeof createPolicyServing> }> {
  const spyStore = createSqliteRecordStore({ path: ':memory:' });
  const trained: number[][] = [];
  const spied: TrainingEngine = Object.assign(Object.create(trainingEngine) as TrainingEngine, {
    forwardBackward: (input: Parameters<TrainingEngine['forwardBackward']>[0]) => {
      trained.push(...input.data.map((datum) => [...datum.advantages]));
      return trainingEngine.forwardBackward(input);
    },
  });
  const serving = createPolicyServing({ store: spyStore, engine, logger: silent, now: () => 1_000 });
  await serving.start();
  await spyStore.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
  return { store: spyStore, trained, spied, serving };
}

beforeAll(() => {
  store = createSqliteRecordStore({ path: ':memory:' });
  engine = createVersionServingEngine();
  trainingEngine = createFakeTrainingEngine();
});
afterAll(async () => {
  await trainingEngine.close();
  await engine.close();
  await store.close();
});

describe('the trainer on the local engines', () => {
  // Worker threads run compiled JavaScript: the suite builds dist/ before the tests.
  const dist = (name: string) => new URL(path.join('..', '..', 'dist', 'engines', 'local', name), import.meta.url);
  let folder: string;
  let checkpoints: string;
  let localStore: RecordStore;
  let localEngine: InferenceEngine;
  let localTrainingEngine: TrainingEngine;
  beforeAll(async () => {
    folder = createTinyModelFolder();
    checkpoints = mkdtempSync(path.join(tmpdir(), 'clawrl-trainer-'));
    localStore = createSqliteRecordStore({ path: ':memory:' });
    localEngine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl: dist('sampler-worker.js') });
    localTrainingEngine = await createLocalTrainingEngine({ modelDirectory: folder, modelId: 'tiny', checkpointDirectory: checkpoints, lora: { rank: 4, alpha: 8 }, workerUrl: dist('trainer-worker.js') });
  });
  afterAll(async () => {
    await localTrainingEngine?.close();
    await localEngine?.close();
    await localStore?.close();
    rmSync(folder, { recursive: true, force: true });
    rmSync(checkpoints, { recursive: true, force: true });
  });

  it('drops and counts samples beyond the staleness limit, trains on the rest and serves the new version', async () => {
    const serving = createPolicyServing({ store: localStore, engine: localEngine, logger: silent, now: () => 1_000 });
    await serving.start();
    // Versions 1..3 exist (published by earlier steps); serving stays on the base.
    for (const version of [1, 2, 3]) {
      await localStore.recordPolicyVersion({ version, parent: version - 1, kind: 'adapter', files: { 'adapter_model.safetensors': Uint8Array.of(version) }, step: null, samples: 0, metrics: null, createdAt: 1_000 + version }, { activate: false });
    }
    await localStore.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
    for (const [index, policyVersion] of [0, 1, 2].entries()) {
      const id = `turn-${index}`;
      await localStore.recordTurn({
        id, sessionId: 's', type: 'main', status: 'completed', trainable: true, tenant: null, user: null, model: 'tiny', policyVersion,
        messages: [{ role: 'user', content: 'q' }], tools: [], sampling: { temperature: 0.8, topP: 1, stop: [], n: 1, topLogprobs: 0 },
        promptTokenIds: [3, 14, 15, 92], responseTokenIds: [65, 35, 89], logprobs: [-4, -4.5, -5], response: { role: 'assistant', content: 'a' },
        finishReason: 'stop', timings: { startedAt: 1, firstTokenAt: 2, endedAt: 3 }, error: null, replyKey: null,
      });
      await localStore.recordSample({
        id: `sample-${index}`, turnId: id, method: 'rl', status: 'ready', dropReason: null, policyVersion, judgementId: null, feedbackId: null,
        score: 1, hint: null, group: null, lossMask: [1, 1, 1], distillationGaps: null, teacherLogprobs: null, support: null, createdAt: 10 + index,
      });
    }
    const trainer = createTrainer({ store: localStore, trainingEngine: localTrainingEngine, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 16, maxStaleness: 2, pollIntervalMs: 60_000 });
    await trainer.start();
    const outcome = await trainer.trainNow();
    // Newest version 3: the version-0 sample is 3 versions old (> 2) and dropped; versions 1 and 2 train.
    expect(outcome).toMatchObject({ kind: 'trained', samplesDropped: 1, step: { step: 1, policyVersion: 4, samplesUsed: 2, checkpoint: 'step-1' } });
    expect(trainer.status()).toMatchObject({ samplesDroppedStale: 1, trainingVersion: 4 });
    expect((await localStore.listSamples()).map((sample) => [sample.id, sample.status, sample.dropReason])).toEqual([
      ['sample-0', 'dropped', 'stale'],
      ['sample-1', 'trained', null],
      ['sample-2', 'trained', null],
    ]);
    const newest = (await localStore.listPolicyVersions()).at(-1);
    expect(newest).toMatchObject({ version: 4, parent: 0, active: true, kind: 'adapter' });
    expect(newest?.metrics).toMatchObject({ samplesUsed: 2, samplesDropped: 1, lossTokens: 6 });
    expect(await servedVersion(localEngine)).toBe(4);
    expect(await trainer.trainNow()).toEqual({ kind: 'idle' });

    await trainer.activate(0);
    expect(await servedVersion(localEngine)).toBe(0);
    expect((await localStore.trainingSummary()).activeVersion).toBe(0);
    await trainer.close();
  });
});

describe('the trainer', () => {
  it('with a batch baseline, trains each reward against the mean of the other rewards in the step', async () => {
    const { store: batchStore, trained, spied, serving } = await advantageSpy();
    try {
      // Combine samples at w_rl = 0.5: A = 0.5·(r − b) + Δ, with Δ = 0.1 on the first token.
      for (const [index, score] of [-1, -1, 1].entries()) {
        await recordSampledTurn(batchStore, index, {
          method: 'combine', policyVersion: 0, score, hint: 'h', distillationGaps: [0.1, 0], teacherLogprobs: [-3.9, -4.5],
        });
      }
      const trainer = createTrainer({
        store: batchStore, trainingEngine: spied, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 16, pollIntervalMs: 60_000,
        advantages: { rewardBaseline: 'batch', rlWeight: 0.5 },
      });
      await trainer.start();
      expect(await trainer.trainNow()).toMatchObject({ kind: 'trained' });
      await trainer.close();
      // A −1's peers average 0 (−1 and +1); the +1's peers average −1, so its reward part counts double.
      expect(trained.map((advantages) => advantages.map((value) => Number(value.toFixed(6))))).toEqual([
        [-0.4, -0.5],
        [-0.4, -0.5],
        [1.1, 1],
      ]);
    } finally {
      await batchStore.close();
    }
  });

  it('trains a rollout group against its own mean (÷ std as the recipe says, unclamped), live samples against their batch, and drops and counts the samples with no signal', async () => {
    const { store: mixedStore, trained, spied, serving } = await advantageSpy();
    try {
      // Live −1 and +1; group a (one success in four, rewards as the driver posts them); group b all equal.
      const entries: [number, string | null][] = [[-1, null], [1, 'a'], [1, null], [0, 'a'], [0, 'a'], [0, 'a'], [0.5, 'b'], [0.5, 'b']];
      for (const [index, [score, group]] of entries.entries()) {
        await recordSampledTurn(mixedStore, index, { method: 'rl', policyVersion: 0, score, hint: null, distillationGaps: null, teacherLogprobs: null, group: group === null ? null : { id: group, turnIndex: 0 } });
      }
      const trainer = createTrainer({
        store: mixedStore, trainingEngine: spied, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 16, pollIntervalMs: 60_000,
        advantages: { rewardBaseline: 'batch', groupNormalizeStd: true },
      });
      await trainer.start();
      expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { samplesUsed: 6, metrics: { samplesZeroAdvantage: 2 } } });
      await trainer.close();
      // Live: each against the other live reward (−1 − 1, 1 − (−1)). Group a: mean 1/4, std √3/4, so the
      // success gets (3/4) / (√3/4) = √3 > 1, kept; the failures −1/√3. Group b agrees: dropped.
      const lone = 0.75 / (Math.sqrt(3) / 4 + 1e-6);
      const rest = -0.25 / (Math.sqrt(3) / 4 + 1e-6);
      expect(trained.map((advantages) => advantages.map((value) => Number(value.toFixed(6))))).toEqual(
        [[-2, -2], [lone, lone], [2, 2], [rest, rest], [rest, rest], [rest, rest]].map((advantages) => advantages.map((value) => Number(value.toFixed(6)))),
      );
      expect((await mixedStore.listSamples()).filter((sample) => sample.status === 'dropped').map((sample) => [sample.id, sample.dropReason])).toEqual([
        ['sample-6', 'zero-advantage'],
        ['sample-7', 'zero-advantage'],
      ]);
    } finally {
      await mixedStore.close();
    }
  });

  it('on demand, trains again at once when a later judgement superseded a sample while the step ran', async () => {
    const { store: raceStore, spied, serving } = await advantageSpy();
    try {
      for (const [index, score] of [-1, 1].entries()) await recordSampledTurn(raceStore, index, { method: 'rl', policyVersion: 0, score, hint: null, distillationGaps: null, teacherLogprobs: null });
      let superseded = false;
      // The first pass's engine call is where a re-judged turn's new sample replaces the one being trained.
      const racing: TrainingEngine = Object.assign(Object.create(spied) as TrainingEngine, {
        forwardBackward: async (input: Parameters<TrainingEngine['forwardBackward']>[0]) => {
          if (!superseded) {
            superseded = true;
            await raceStore.recordSample({
              id: 'sample-0-again', turnId: 'turn-0', method: 'rl', status: 'ready', dropReason: null, policyVersion: 0, judgementId: null, feedbackId: null,
              score: 1, hint: null, group: null, lossMask: [1, 1], distillationGaps: null, teacherLogprobs: null, support: null, createdAt: 50,
            });
          }
          return spied.forwardBackward(input);
        },
      });
      const trainer = createTrainer({ store: raceStore, trainingEngine: racing, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 16, pollIntervalMs: 60_000 });
      await trainer.start();
      expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { step: 1, samplesUsed: 2 } });
      expect(trainer.status().failedSteps).toBe(1);
      expect((await raceStore.listSamples()).map((sample) => [sample.id, sample.status])).toEqual([
        ['sample-0', 'dropped'],
        ['sample-1', 'trained'],
        ['sample-0-again', 'trained'],
      ]);
      await trainer.close();
    } finally {
      await raceStore.close();
    }
  });

  it('says no-signal when every claimed sample has a zero advantage, and consumes them', async () => {
    const { store: flatStore, trained, spied, serving } = await advantageSpy();
    try {
      for (const index of [0, 1]) await recordSampledTurn(flatStore, index, { method: 'rl', policyVersion: 0, score: 0, hint: null, distillationGaps: null, teacherLogprobs: null });
      const trainer = createTrainer({ store: flatStore, trainingEngine: spied, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 16, pollIntervalMs: 60_000 });
      await trainer.start();
      expect(await trainer.trainNow()).toEqual({ kind: 'no-signal', samplesDropped: 2 });
      expect(await trainer.trainNow()).toEqual({ kind: 'idle' });
      await trainer.close();
      expect(trained).toEqual([]);
    } finally {
      await flatStore.close();
    }
  });

  it('hands a sample\'s support set to the engine (tokens without an advantage left out) and counts it in the step\'s loss', async () => {
    const supportStore = createSqliteRecordStore({ path: ':memory:' });
    const handed: unknown[] = [];
    const spied: TrainingEngine = Object.assign(Object.create(trainingEngine) as TrainingEngine, {
      forwardBackward: (input: Parameters<TrainingEngine['forwardBackward']>[0]) => {
        handed.push(...input.data.map((datum) => datum.support));
        return trainingEngine.forwardBackward(input);
      },
    });
    try {
      const serving = createPolicyServing({ store: supportStore, engine, logger: silent, now: () => 1_000 });
      await serving.start();
      await supportStore.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
      await recordSampledTurn(supportStore, 0, {
        method: 'combine', policyVersion: 0, score: 0, hint: 'h', distillationGaps: [0.5, -2], teacherLogprobs: [-3.5, -6.5],
        support: [
          [
            { id: 7, studentLogprob: -1, teacherLogprob: -0.5, gap: 0.5, weight: 0.6 },
            { id: 9, studentLogprob: -2, teacherLogprob: null, gap: null, weight: 0.4 },
          ],
          // −2 is clipped to −1 (C = 1).
          [{ id: 11, studentLogprob: -1, teacherLogprob: -3, gap: -2, weight: 1 }],
        ],
      });
      const trainer = createTrainer({ store: supportStore, trainingEngine: spied, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 1, pollIntervalMs: 60_000 });
      await trainer.start();
      const outcome = await trainer.trainNow();
      await trainer.close();
      expect(handed).toEqual([[{ tokenIds: [7], advantages: [expect.closeTo(0.3, 12)] }, { tokenIds: [11], advantages: [-1] }]]);
      // Every advantage on the sampled tokens is 0, so the loss is the support set's alone.
      expect(outcome).toMatchObject({ kind: 'trained' });
      const metrics = outcome.kind === 'trained' ? outcome.step.metrics : null;
      expect(metrics?.policyGradientLoss).not.toBe(0);
      expect(metrics?.policyGradientLoss).toBeCloseTo(metrics?.loss ?? Number.NaN, 5);
    } finally {
      await supportStore.close();
    }
  });

  it('with a learning-rate half-life, halves the step size every half-life steps, counting the steps already committed', async () => {
    const decayStore = createSqliteRecordStore({ path: ':memory:' });
    const rates: (number | undefined)[] = [];
    const spied: TrainingEngine = Object.assign(Object.create(trainingEngine) as TrainingEngine, {
      optimizerStep: (input: Parameters<TrainingEngine['optimizerStep']>[0]) => {
        rates.push(input?.learningRate);
        return trainingEngine.optimizerStep(input);
      },
    });
    try {
      const serving = createPolicyServing({ store: decayStore, engine, logger: silent, now: () => 1_000 });
      await serving.start();
      await decayStore.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
      const addSample = (index: number, policyVersion: number) =>
        recordSampledTurn(decayStore, index, { method: 'rl', policyVersion, score: 1, hint: null, distillationGaps: null, teacherLogprobs: null });
      const options = {
        store: decayStore, trainingEngine: spied, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 1, pollIntervalMs: 60_000,
        learningRateDecay: { halfLifeSteps: 2 },
      };
      const base = trainingEngine.info.learningRate;
      let trainer = createTrainer(options);
      await trainer.start();
      for (const index of [0, 1]) {
        await addSample(index, index);
        expect(await trainer.trainNow()).toMatchObject({ kind: 'trained' });
      }
      await trainer.close();
      // A restarted trainer goes on from the committed step count, not from the base rate.
      trainer = createTrainer(options);
      await trainer.start();
      await addSample(2, 2);
      const third = await trainer.trainNow();
      await trainer.close();
      expect(rates).toHaveLength(3);
      expect(rates[0]).toBe(base);
      expect(rates[1]).toBeCloseTo(base * 2 ** -0.5, 12);
      expect(rates[2]).toBeCloseTo(base / 2, 12);
      expect(third).toMatchObject({ kind: 'trained', step: { step: 3, metrics: { learningRate: rates[2] } } });
    } finally {
      await decayStore.close();
    }
  });

  it('with the anchor, asks the engine for it and reports its KL in the step, counted in the loss', async () => {
    const anchorStore = createSqliteRecordStore({ path: ':memory:' });
    // An engine of its own, still at the base weights, where the anchor is 0.
    const anchorEngine = createFakeTrainingEngine();
    try {
      const serving = createPolicyServing({ store: anchorStore, engine, logger: silent, now: () => 1_000 });
      await serving.start();
      await anchorStore.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
      const trainer = createTrainer({
        store: anchorStore, trainingEngine: anchorEngine, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 1, pollIntervalMs: 60_000,
        loss: { anchorCoefficient: 0.5, anchorTopK: 3 },
      });
      await trainer.start();
      for (const index of [0, 1]) {
        await recordSampledTurn(anchorStore, index, { method: 'rl', policyVersion: index, score: 1, hint: null, distillationGaps: null, teacherLogprobs: null });
        const outcome = await trainer.trainNow();
        expect(outcome).toMatchObject({ kind: 'trained' });
        if (outcome.kind !== 'trained') throw new Error('no step');
        const { anchorKl, loss, policyGradientLoss } = outcome.step.metrics;
        // The first step trains the base, where the anchor is 0 (to float error); the second starts from a moved policy.
        if (index === 0) expect(Math.abs(anchorKl ?? Number.NaN)).toBeLessThan(1e-4);
        else {
          expect(anchorKl).toBeGreaterThan(0);
          expect(loss).toBeCloseTo(policyGradientLoss + 0.5 * (anchorKl ?? 0), 4);
        }
      }
      await trainer.close();
      expect(anchorEngine.forwardBackwardCalls[0]?.loss).toMatchObject({ anchorCoefficient: 0.5, anchorTopK: 3 });
    } finally {
      await anchorStore.close();
    }
  });

  it('with several epochs, passes over the batch once per epoch against the first pass\'s log-probs, then publishes one version', async () => {
    const epochStore = createSqliteRecordStore({ path: ':memory:' });
    const passes: Parameters<TrainingEngine['forwardBackward']>[0][] = [];
    const firstLogprobs: number[][] = [];
    let optimizerSteps = 0;
    const spied: TrainingEngine = Object.assign(Object.create(trainingEngine) as TrainingEngine, {
      forwardBackward: async (input: Parameters<TrainingEngine['forwardBackward']>[0]) => {
        passes.push(input);
        const output = await trainingEngine.forwardBackward(input);
        if (passes.length === 1) firstLogprobs.push(...output.logprobs);
        return output;
      },
      optimizerStep: (input: Parameters<TrainingEngine['optimizerStep']>[0]) => {
        optimizerSteps += 1;
        return trainingEngine.optimizerStep(input);
      },
    });
    try {
      const serving = createPolicyServing({ store: epochStore, engine, logger: silent, now: () => 1_000 });
      await serving.start();
      await epochStore.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
      await recordSampledTurn(epochStore, 0, {
        method: 'combine', policyVersion: 0, score: 1, hint: 'h', distillationGaps: [0, 0], teacherLogprobs: [-4, -4.5],
        support: [[{ id: 7, studentLogprob: -1, teacherLogprob: -0.5, gap: 0.5, weight: 1 }], []],
      });
      expect(() => createTrainer({ store: epochStore, trainingEngine: spied, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEpochs: 0 })).toThrow(/trainEpochs/);
      const trainer = createTrainer({ store: epochStore, trainingEngine: spied, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 1, trainEpochs: 3, pollIntervalMs: 60_000 });
      await trainer.start();
      const outcome = await trainer.trainNow();
      await trainer.close();
      expect(passes).toHaveLength(3);
      expect(optimizerSteps).toBe(3);
      expect(passes[0]?.data[0]?.proximalLogprobs).toBeUndefined();
      for (const later of passes.slice(1)) {
        expect(later.data[0]?.proximalLogprobs).toEqual(firstLogprobs[0]);
        expect(later.data[0]?.support?.[0]?.proximalLogprobs).toHaveLength(1);
        expect(later.data[0]?.support?.[1]).toEqual({ tokenIds: [], advantages: [], proximalLogprobs: [] });
      }
      expect(outcome).toMatchObject({ kind: 'trained', step: { step: 1, policyVersion: 1, metrics: { epochs: 3 } } });
      expect((await epochStore.listPolicyVersions()).map((version) => version.version)).toEqual([0, 1]);
      expect(await servedVersion()).toBe(1);
    } finally {
      await epochStore.close();
    }
  });

  it('sends the configured loss and works out the step\'s policy loss for that loss, the rollout as its old policy', async () => {
    const lossStore = createSqliteRecordStore({ path: ':memory:' });
    const seen: { loss: TrainingLoss; logprobs: number[] }[] = [];
    const spied: TrainingEngine = Object.assign(Object.create(trainingEngine) as TrainingEngine, {
      forwardBackward: async (input: Parameters<TrainingEngine['forwardBackward']>[0]) => {
        const output = await trainingEngine.forwardBackward(input);
        seen.push({ loss: input.loss, logprobs: output.logprobs[0] ?? [] });
        return output;
      },
    });
    try {
      const serving = createPolicyServing({ store: lossStore, engine, logger: silent, now: () => 1_000 });
      await serving.start();
      await lossStore.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
      const rollout = [-4, -4.5];
      const perToken: Record<'importance_sampling' | 'ppo', (ratio: number, advantage: number) => number> = {
        importance_sampling: (ratio, advantage) => -ratio * advantage,
        ppo: (ratio, advantage) => Math.max(-ratio * advantage, -Math.min(1.28, Math.max(0.8, ratio)) * advantage),
      };
      for (const [index, lossName] of (['importance_sampling', 'ppo'] as const).entries()) {
        const score = index === 0 ? 1 : -1;
        await recordSampledTurn(lossStore, index, { method: 'rl', policyVersion: index, score, hint: null, distillationGaps: null, teacherLogprobs: null });
        const trainer = createTrainer({ store: lossStore, trainingEngine: spied, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 1, pollIntervalMs: 60_000, lossName });
        await trainer.start();
        const outcome = await trainer.trainNow();
        await trainer.close();
        const { loss, logprobs } = seen[index] ?? { loss: null, logprobs: [] };
        expect(loss).toEqual(lossName === 'ppo' ? { name: 'ppo', clipLow: 0.2, clipHigh: 0.28 } : { name: 'importance_sampling' });
        const ratios = logprobs.map((logprob, position) => Math.exp(logprob - (rollout[position] ?? 0)));
        const metrics = outcome.kind === 'trained' ? outcome.step.metrics : null;
        expect(metrics?.policyGradientLoss).toBeCloseTo(ratios.reduce((sum, ratio) => sum + perToken[lossName](ratio, score), 0) / 2, 9);
        // The engine's own loss agrees, and the sampler mismatch is still reported, untruncated.
        expect(metrics?.loss).toBeCloseTo(metrics?.policyGradientLoss ?? Number.NaN, 4);
        expect(metrics?.importanceRatio.mean).toBeCloseTo(((ratios[0] ?? 0) + (ratios[1] ?? 0)) / 2, 9);
      }
    } finally {
      await lossStore.close();
    }
  });

  it('drops and counts samples drawn at a temperature an engine that trains only at 1 cannot train, and trains the rest', async () => {
    const temperatureStore = createSqliteRecordStore({ path: ':memory:' });
    const trained: number[] = [];
    const atOne: TrainingEngine = Object.assign(Object.create(trainingEngine) as TrainingEngine, {
      capabilities: { ...trainingEngine.capabilities, anyTemperature: false },
      forwardBackward: async (input: Parameters<TrainingEngine['forwardBackward']>[0]) => {
        trained.push(...input.data.map((datum) => datum.temperature));
        return trainingEngine.forwardBackward(input);
      },
    });
    try {
      const serving = createPolicyServing({ store: temperatureStore, engine, logger: silent, now: () => 1_000 });
      await serving.start();
      await temperatureStore.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
      const sample = { method: 'rl' as const, policyVersion: 0, score: 1, hint: null, distillationGaps: null, teacherLogprobs: null };
      await recordSampledTurn(temperatureStore, 0, sample, 0.7);
      await recordSampledTurn(temperatureStore, 1, sample, 1);
      const trainer = createTrainer({ store: temperatureStore, trainingEngine: atOne, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 2, pollIntervalMs: 60_000 });
      await trainer.start();
      expect((await trainer.trainNow()).kind).toBe('trained');
      await trainer.close();
      expect(trained).toEqual([1]);
      const samples = await temperatureStore.listSamples();
      expect(samples.map((stored) => [stored.id, stored.status, stored.dropReason])).toEqual(
        expect.arrayContaining([['sample-0', 'dropped', 'temperature'], ['sample-1', 'trained', null]]),
      );
    } finally {
      await temperatureStore.close();
    }
  });

  it('refuses at start-up, in one line naming the option, a configuration its training engine cannot run', () => {
    const remote = Object.create(trainingEngine, {
      engineId: { value: 'remote' },
      capabilities: { value: { losses: ['ppo', 'importance_sampling'], referenceLogprobs: false, anchor: false, supportSets: false, proximalLogprobs: false, anyTemperature: true } },
    }) as TrainingEngine;
    const serving = createPolicyServing({ store, engine, logger: silent, now: () => 1_000 });
    const create = (options: Partial<Parameters<typeof createTrainer>[0]>) => () => createTrainer({ store, trainingEngine: remote, serving, logger: silent, now: () => 0, workerId: 'w', ...options });
    expect(create({})).toThrow(/^The training engine remote cannot compute the loss decoupled_ppo \(it computes ppo, importance_sampling\): change --loss\.$/);
    expect(create({ lossName: 'ppo', trainEpochs: 2 })).toThrow(expect.objectContaining({ code: 'configuration_error', param: 'trainEpochs' }));
    expect(create({ lossName: 'importance_sampling', supportTopK: 4 })).toThrow(/opdSupportK/);
    expect(create({ lossName: 'ppo', loss: { klCoefficient: 0.1 } })).toThrow(/--kl-coefficient/);
    expect(create({ lossName: 'ppo' })).not.toThrow();
  });
});
