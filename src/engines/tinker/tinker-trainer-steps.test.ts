import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalInferenceEngine } from '../local/create-local-inference-engine.js';
import { createTinyModelFolder } from '../local/testing/create-tiny-model-folder.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import type { RecordStore } from '../../spec/record-store.js';
import { createSqliteRecordStore } from '../../stores/sqlite/create-sqlite-record-store.js';
import { createTrainer } from '../../trainer/create-trainer.js';
import { createPolicyServing } from '../../serving/policy-serving.js';
import { createTinkerClient } from './create-tinker-client.js';
import { createTinkerTrainingEngine, tinkerCheckpointFileName } from './create-tinker-training-engine.js';
import { createTinkerTestServer, type TinkerTestServer } from './testing/create-tinker-test-server.js';

// The trainer on the Tinker engine: what a step does when the service fails it, and a restart.
const dist = (name: string) => new URL(path.join('..', '..', '..', 'dist', 'engines', 'local', name), import.meta.url);
const silent: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const folder = createTinyModelFolder();
let server: TinkerTestServer;
let store: RecordStore;
let engine: InferenceEngine;

async function recordSampledTurn(index: number, policyVersion = 0): Promise<void> {
  const id = `turn-${index}`;
  await store.recordTurn({
    id, sessionId: 's', type: 'main', status: 'completed', trainable: true, tenant: null, user: null, model: 'tiny', policyVersion,
    messages: [{ role: 'user', content: 'q' }], tools: [], sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
    promptTokenIds: [3, 14, 15, 92], responseTokenIds: [65, 35], logprobs: [-4, -4.5], response: { role: 'assistant', content: 'a' },
    finishReason: 'stop', timings: { startedAt: 1, firstTokenAt: 2, endedAt: 3 }, error: null, replyKey: null,
  });
  await store.recordSample({
    id: `sample-${index}`, turnId: id, status: 'ready', dropReason: null, judgementId: null, feedbackId: null, group: null, lossMask: [1, 1], support: null, createdAt: 10 + index,
    method: 'rl', policyVersion, score: 1, hint: null, distillationGaps: null, teacherLogprobs: null,
  });
}

const openEngine = async (options: { downloadAdapters?: boolean; logger?: Logger } = {}) =>
  createTinkerTrainingEngine({ client: await createTinkerClient({ url: server.url, apiKey: 'tml-test', retry: { initialDelayMs: 1, maxDelayMs: 2, maxAttempts: 2, archive: { notReadyDelayMs: 1, attempts: 2 } } }), baseModel: 'tiny', loraRank: 4, ...options });

beforeAll(async () => {
  server = await createTinkerTestServer({ modelDirectory: folder, baseModel: 'tiny', apiKey: 'tml-test', workerUrl: dist('trainer-worker.js'), loraAlpha: 8 });
  store = createSqliteRecordStore({ path: ':memory:' });
  engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl: dist('sampler-worker.js') });
  await store.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
});
afterAll(async () => {
  await engine.close();
  await store.close();
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('the trainer on the Tinker training engine', () => {
  it('publishes a version per step, returns a failed step’s samples to the queue, and resumes from save_state after a restart', async () => {
    const serving = createPolicyServing({ store, engine, logger: silent, now: () => 1_000 });
    await serving.start();
    const options = { store, serving, logger: silent, now: () => 2_000, workerId: 'trainer', trainEvery: 2, pollIntervalMs: 60_000 };
    let trainingEngine = await openEngine();
    let trainer = createTrainer({ ...options, trainingEngine });
    await trainer.start();
    for (const index of [0, 1]) await recordSampledTurn(index);
    const first = await trainer.trainNow();
    expect(first).toMatchObject({ kind: 'trained', step: { step: 1, policyVersion: 1 } });
    const published = await serving.artifactOf(1);
    expect(Object.keys(published.files)).toEqual([tinkerCheckpointFileName]);
    expect(JSON.parse(new TextDecoder().decode(published.files[tinkerCheckpointFileName]))).toMatchObject({ baseModel: 'tiny', samplerPath: expect.stringMatching(/^tinker:\/\/.+\/sampler_weights\//) });

    // A 5xx that outlasts the retries fails the step; its samples are ready again.
    for (const index of [2, 3]) await recordSampledTurn(index);
    server.inject({ path: 'forward_backward', kind: 'http-500', times: 2 });
    await expect(trainer.trainNow()).rejects.toThrow(/forward_backward failed 2 times/);
    expect((await store.counts()).judging.samples.ready).toBe(2);
    expect(trainer.status().failedSteps).toBe(1);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { step: 2, policyVersion: 2 } });
    await trainer.close();
    await trainingEngine.close();

    // A new process: a new session and training client, loaded from the last step's saved state.
    const loadsBefore = server.received.filter((request) => request.path === 'load_weights').length;
    trainingEngine = await openEngine();
    trainer = createTrainer({ ...options, trainingEngine });
    await trainer.start();
    expect(server.received.filter((request) => request.path === 'load_weights').length).toBe(loadsBefore + 1);
    for (const index of [4, 5]) await recordSampledTurn(index);
    expect(await trainer.trainNow()).toMatchObject({ kind: 'trained', step: { step: 3, policyVersion: 3 } });
    await trainer.close();
    await trainingEngine.close();
  });

  it('serves the PEFT adapter of each version on another engine, and publishes a version whose archive download failed without it, the step kept', async () => {
    const serving = createPolicyServing({ store, engine, logger: silent, now: () => 3_000, retryDelayMs: 60_000 });
    await serving.start();
    const warnings: { message: string; fields: unknown }[] = [];
    const logger: Logger = { ...silent, warn: (message, fields) => void warnings.push({ message, fields }) };
    const trainingEngine = await openEngine({ downloadAdapters: true, logger });
    const trainer = createTrainer({ store, serving, logger: silent, now: () => 4_000, workerId: 'trainer', trainEvery: 2, pollIntervalMs: 60_000, trainingEngine });
    await trainer.start();
    const latest = (await store.trainingSummary()).latestVersion ?? 0;
    for (const index of [10, 11]) await recordSampledTurn(index, latest);
    const served = await trainer.trainNow();
    expect(served).toMatchObject({ kind: 'trained' });
    const version = served.kind === 'trained' ? served.step.policyVersion : -1;
    expect(Object.keys((await serving.artifactOf(version)).files).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors', tinkerCheckpointFileName]);
    expect(serving.servedVersion).toBe(version);

    for (const index of [12, 13]) await recordSampledTurn(index, version);
    server.inject({ path: 'archive', kind: 'http-500', times: 2 });
    const unserved = await trainer.trainNow();
    expect(unserved).toMatchObject({ kind: 'trained', step: { policyVersion: version + 1 } });
    expect((await store.counts()).judging.samples.ready).toBe(0);
    const artifact = await serving.artifactOf(version + 1);
    expect(Object.keys(artifact.files)).toEqual([tinkerCheckpointFileName]);
    expect(JSON.parse(new TextDecoder().decode(artifact.files[tinkerCheckpointFileName]))).toMatchObject({ peftAdapter: { published: false, reason: expect.stringContaining('HTTP 500') } });
    expect(warnings.map((warning) => warning.message)).toEqual([expect.stringMatching(/published without its PEFT adapter: .*keep serving the previous version/)]);
    // The engine keeps serving the version it could load.
    expect(serving.servedVersion).toBe(version);
    serving.close();
    await trainer.close();
    await trainingEngine.close();
  });
});
