import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAICompatibleEngine } from '../engines/openai-compatible/create-openai-compatible-engine.js';
import { createPeftAdapterFiles } from '../engines/testing/create-peft-adapter-files.js';
import { startFakeVllmServer, type FakeVllmServer } from '../engines/testing/fake-vllm-server.js';
import type { InferenceEngine } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { RecordStore } from '../spec/record-store.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { createPolicyServing, type PolicyServing } from './policy-serving.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Fixture {
  server: FakeVllmServer;
  engine: InferenceEngine;
  store: RecordStore;
  serving: PolicyServing;
  errors: string[];
}

async function setUp(): Promise<Fixture> {
  const server = await startFakeVllmServer();
  const adapterDirectory = await mkdtemp(join(tmpdir(), 'clawrl-serving-'));
  const engine = createOpenAICompatibleEngine({ baseUrl: server.url, model: 'fake-model', flavor: 'vllm', timeoutMs: 2000, adapterDirectory });
  const store = createSqliteRecordStore({ path: ':memory:' });
  const errors: string[] = [];
  const logger: Logger = { info: () => undefined, warn: () => undefined, error: (message) => void errors.push(message) };
  const serving = createPolicyServing({ store, engine, logger, now: () => Date.now(), retryDelayMs: 20, maxRetryDelayMs: 40 });
  cleanups.push(async () => {
    serving.close();
    await engine.close();
    await server.close();
    await store.close();
    await rm(adapterDirectory, { recursive: true, force: true });
  });
  await serving.start();
  return { server, engine, store, serving, errors };
}

async function publish(store: RecordStore, version: number): Promise<void> {
  const files = createPeftAdapterFiles({ baseModel: 'fake-model', seed: version });
  await store.recordPolicyVersion({ version, parent: version - 1, kind: 'adapter', files, step: version, samples: 1, metrics: null, createdAt: version }, { activate: true });
}

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe('policy serving: a version the engine fails to load', () => {
  it('keeps serving the previous version, reports the failure in its status, and retries until it loads', async () => {
    const { server, store, serving, errors } = await setUp();
    await publish(store, 1);
    server.failNextLoads(2);
    await expect(serving.serve(await serving.artifactOf(1))).rejects.toThrow(/fake load failure/);
    expect(serving.status()).toMatchObject({ role: 'gateway', engine: 'vllm', servedVersion: 0, pending: { version: 1, attempts: 1, error: expect.stringContaining('fake load failure') as unknown } });
    expect(serving.status().pending?.retryAt).toEqual(expect.any(Number));
    await until(() => serving.servedVersion === 1);
    expect(serving.status().pending).toBeNull();
    expect(errors).toEqual(['cannot load the policy version yet; serving the previous one and retrying', 'cannot load the policy version yet; serving the previous one and retrying']);
    expect(server.requests.filter((request) => request.path === '/v1/load_lora_adapter')).toHaveLength(3);
  });

  it('stops retrying an old version once a newer one is served', async () => {
    const { server, store, serving } = await setUp();
    await publish(store, 1);
    server.failNextLoads(1);
    await expect(serving.serve(await serving.artifactOf(1))).rejects.toThrow();
    await publish(store, 2);
    await serving.serve(await serving.artifactOf(2));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(serving.servedVersion).toBe(2);
    expect(serving.status().pending).toBeNull();
  });

  it('does not retry what the engine can never load', async () => {
    const { store, serving } = await setUp();
    await store.recordPolicyVersion({ version: 1, parent: 0, kind: 'full', files: {}, step: 1, samples: 1, metrics: null, createdAt: 1 }, { activate: true });
    await expect(serving.serve(await serving.artifactOf(1))).rejects.toThrow(/--train-params lora/);
    expect(serving.status().pending).toMatchObject({ version: 1, retryAt: null });
  });

  it('rolls back to an adapter that was unloaded, and a failed activation changes nothing', async () => {
    const { server, store, serving } = await setUp();
    for (const version of [1, 2, 3, 4, 5]) {
      await publish(store, version);
      await serving.serve(await serving.artifactOf(version));
    }
    await server.settled();
    expect([...server.adapters.keys()].some((name) => name.startsWith('fake-model-v1-'))).toBe(false);
    server.failNextLoads(1);
    await expect(serving.activate(1)).rejects.toThrow(/fake load failure/);
    expect((await store.trainingSummary()).activeVersion).toBe(5);
    expect(serving.servedVersion).toBe(5);
    await serving.activate(1);
    expect((await store.trainingSummary()).activeVersion).toBe(1);
    expect([...server.adapters.keys()].some((name) => name.startsWith('fake-model-v1-'))).toBe(true);
  });
});

describe('policy serving: start-up', () => {
  it('serves the base while the active version cannot be loaded yet, keeps it active in the store, and loads it on a retry', async () => {
    const server = await startFakeVllmServer();
    const adapterDirectory = await mkdtemp(join(tmpdir(), 'clawrl-serving-'));
    const engine = createOpenAICompatibleEngine({ baseUrl: server.url, model: 'fake-model', flavor: 'vllm', timeoutMs: 2000, adapterDirectory });
    const store = createSqliteRecordStore({ path: ':memory:' });
    const serving = createPolicyServing({ store, engine, logger: { info: () => undefined, warn: () => undefined, error: () => undefined }, now: () => Date.now(), retryDelayMs: 20 });
    cleanups.push(async () => {
      serving.close();
      await engine.close();
      await server.close();
      await store.close();
      await rm(adapterDirectory, { recursive: true, force: true });
    });
    await store.recordPolicyVersion({ version: 0, parent: null, kind: 'base', files: {}, step: null, samples: 0, metrics: null, createdAt: 0 }, { activate: true });
    await publish(store, 1);
    server.failNextLoads(1);
    expect(await serving.start()).toBe(0);
    expect((await store.trainingSummary()).activeVersion).toBe(1);
    expect(serving.status().pending).toMatchObject({ version: 1, attempts: 1 });
    await until(() => serving.servedVersion === 1);
  });
});
