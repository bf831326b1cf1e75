import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAICompatibleEngine } from '../engines/openai-compatible/create-openai-compatible-engine.js';
import { createPeftAdapterFiles } from '../engines/testing/create-peft-adapter-files.js';
import { startFakeVllmServer } from '../engines/testing/fake-vllm-server.js';
import { createRulesJudge } from '../judge/create-rules-judge.js';
import type { PolicyArtifact } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { RecordStore } from '../spec/record-store.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { createPolicyLifecycle, type PolicyLifecycleOptions } from './policy-lifecycle.js';
import { createPolicyServing } from './policy-serving.js';
import { createStorePolicyServing } from './create-store-policy-serving.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const logger: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function setUp(options: Partial<PolicyLifecycleOptions>) {
  const server = await startFakeVllmServer();
  const adapterDirectory = await mkdtemp(join(tmpdir(), 'clawrl-lifecycle-'));
  const engine = createOpenAICompatibleEngine({ baseUrl: server.url, model: 'fake-model', flavor: 'vllm', timeoutMs: 2000, adapterDirectory });
  const store: RecordStore = createSqliteRecordStore({ path: ':memory:' });
  const serving = createPolicyServing({ store, engine, logger, now: () => Date.now() });
  await serving.start();
  const candidate: PolicyArtifact = { version: 1, kind: 'adapter', files: createPeftAdapterFiles({ baseModel: 'fake-model', seed: 1 }) };
  await store.recordPolicyVersion({ ...candidate, parent: 0, step: 1, samples: 1, metrics: null, createdAt: 1 }, { activate: false });
  const lifecycle = createPolicyLifecycle({ store, serving, engine, logger, now: () => Date.now(), gate: 'none', replay: null, canaryShare: 0, watchIntervalMs: 20, ...options });
  cleanups.push(async () => {
    lifecycle.close();
    serving.close();
    await engine.close();
    await server.close();
    await store.close();
    await rm(adapterDirectory, { recursive: true, force: true });
  });
  const stateOf = async (version: number) => (await store.listPolicyVersions()).find((record) => record.version === version);
  return { store, server, lifecycle, candidate, stateOf };
}

describe('policy lifecycle', () => {
  it('without a gate or canary the candidate is active at once', async () => {
    const { lifecycle, candidate, stateOf } = await setUp({});
    expect(lifecycle.gated).toBe(false);
    expect(await lifecycle.submit(candidate, 0)).toMatchObject({ kind: 'active', version: 1 });
    expect(await stateOf(1)).toMatchObject({ state: 'active', active: true, stateReason: 'no gate configured' });
  });

  it('rejects a candidate the gate has too few held-out turns for, and the incumbent keeps serving', async () => {
    const judge = createRulesJudge({ name: 'thanks', rules: [{ when: [{ on: 'nextState', rule: { type: 'regex', pattern: 'thank', expect: true } }], score: 1 }] });
    const { lifecycle, candidate, stateOf, server } = await setUp({ gate: 'replay', replay: { judge, heldOutShare: 0.1 } });
    const outcome = await lifecycle.submit(candidate, 0);
    expect(outcome).toMatchObject({ kind: 'rejected', version: 1 });
    const record = await stateOf(1);
    expect(record).toMatchObject({ state: 'rejected', active: false, gate: { decision: 'reject', turns: 0, heldOut: true } });
    expect(record?.stateReason).toContain('the gate needs 8');
    // Staged for the gate: loaded on the server, never made the served version.
    expect([...server.adapters.keys()].some((name) => name.includes('-v1-'))).toBe(true);
    expect(await stateOf(0)).toMatchObject({ state: 'active', active: true });
  });

  it("routes only the canary cohort to the candidate and ends the canary on a person's activation", async () => {
    const { lifecycle, candidate, stateOf } = await setUp({ canaryShare: 0.5 });
    const outcome = lifecycle.submit(candidate, 0);
    for (let attempt = 0; attempt < 200 && !lifecycle.routing(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lifecycle.routing()).toBe(true);
    const sessions = Array.from({ length: 200 }, (_, index) => `session-${index}`);
    const routed = sessions.filter((id) => lifecycle.versionFor(id) === 1).length;
    expect(routed).toBeGreaterThan(60);
    expect(routed).toBeLessThan(140);
    expect(await stateOf(1)).toMatchObject({ state: 'canary' });
    await lifecycle.interrupt(0);
    expect(await outcome).toMatchObject({ kind: 'interrupted', activated: 0 });
    expect(lifecycle.routing()).toBe(false);
    expect(await stateOf(1)).toMatchObject({ state: 'rolled-back', stateReason: 'a person activated version 0 during its canary' });
  });

  it('in a trainer, records the share with the canary from its start, announces routing changes and stages the incumbent too', async () => {
    const announced: number[] = [];
    const { lifecycle, candidate, stateOf, server, store } = await setUp({ canaryShare: 0.25, stageIncumbent: true, announce: async (version) => void announced.push(version) });
    const incumbent: PolicyArtifact = { version: 2, kind: 'adapter', files: createPeftAdapterFiles({ baseModel: 'fake-model', seed: 2 }) };
    await store.recordPolicyVersion({ ...incumbent, parent: 0, step: 2, samples: 1, metrics: null, createdAt: 2 }, { activate: false });
    const outcome = lifecycle.submit(candidate, 2);
    for (let attempt = 0; attempt < 200 && !lifecycle.routing(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lifecycle.incumbent()).toBe(2);
    // What the gateways of a distributed deployment route by: the state and its evidence's share.
    expect(await stateOf(1)).toMatchObject({ state: 'canary', canary: { share: 0.25, incumbent: 2, decision: 'watching' } });
    expect(announced).toEqual([1]);
    // The gate engine serves nobody: the incumbent was staged beside the candidate, neither made the served version.
    expect([...server.adapters.keys()].filter((name) => /-v[12]-/.test(name))).toHaveLength(2);
    await lifecycle.interrupt(0);
    expect(await outcome).toMatchObject({ kind: 'interrupted', activated: 0 });
    expect(announced).toEqual([1, 1]);
    expect(lifecycle.incumbent()).toBeNull();
  });

  it('refuses a replay gate without an engine to sample on', async () => {
    const judge = createRulesJudge({ name: 'thanks', rules: [{ when: [{ on: 'nextState', rule: { type: 'regex', pattern: 'thank', expect: true } }], score: 1 }] });
    const store = createSqliteRecordStore({ path: ':memory:' });
    cleanups.push(() => store.close());
    const serving = createStorePolicyServing({ store, logger, now: () => 0 });
    expect(() => createPolicyLifecycle({ store, serving, engine: null, logger, now: () => 0, gate: 'replay', replay: { judge, heldOutShare: 0.1 }, canaryShare: 0 })).toThrow(/needs an engine/);
  });

  it('ends at start-up what a restart interrupted', async () => {
    const { store, lifecycle, stateOf } = await setUp({ canaryShare: 0.5 });
    await store.setPolicyVersionState(1, 'canary', { reason: 'passed', at: 5 });
    await lifecycle.start();
    expect(await stateOf(1)).toMatchObject({ state: 'rolled-back' });
    expect((await stateOf(1))?.stateReason).toContain('interrupted by a restart');
  });
});
