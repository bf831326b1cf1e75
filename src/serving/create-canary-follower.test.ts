import { afterEach, describe, expect, it } from 'vitest';
import { inSessionCohort } from '../core/session-cohort.js';
import type { PolicyArtifact } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyCanaryEvidence } from '../spec/policy-version-state.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { createCanaryFollower } from './create-canary-follower.js';

const logger: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const signal = { turns: 0, scored: 0, meanScore: null, feedback: 0, meanFeedback: null };
const evidence = (share: number): PolicyCanaryEvidence => ({
  incumbent: 0,
  share,
  lengthTurns: 50,
  margin: 0.25,
  canary: signal,
  incumbentCohort: signal,
  decision: 'watching',
  rule: 'rule',
  reason: 'starting',
  startedAt: 1,
  updatedAt: 1,
});

async function setUp() {
  const store = createSqliteRecordStore({ path: ':memory:' });
  cleanups.push(() => store.close());
  await store.recordPolicyVersion({ version: 0, parent: null, kind: 'base', files: {}, step: null, samples: 0, metrics: null, createdAt: 0 }, { activate: true });
  await store.recordPolicyVersion({ version: 1, parent: 0, kind: 'adapter', files: { 'adapter_config.json': new Uint8Array([123, 125]) }, step: 1, samples: 1, metrics: null, createdAt: 1 }, { activate: false });
  const staged: PolicyArtifact[] = [];
  const engine = { engineId: 'test', stagePolicy: async (artifact: PolicyArtifact) => void staged.push(artifact) };
  return { store, staged, follower: createCanaryFollower({ store, engine, logger }) };
}

describe('the canary follower of a gateway', () => {
  it("routes the store's canary cohort, by the same hash as every gateway, once its candidate is staged, and stops when it ends", async () => {
    const { store, staged, follower } = await setUp();
    await follower.synchronize();
    expect(follower.routing()).toBe(false);
    expect(staged).toEqual([]);

    await store.setPolicyVersionState(1, 'canary', { reason: 'passed', at: 2, canary: evidence(0.3) });
    await follower.synchronize();
    expect(follower.routing()).toBe(true);
    expect(staged.map((artifact) => artifact.version)).toEqual([1]);
    const sessions = Array.from({ length: 100 }, (_, index) => `session-${index}`);
    for (const sessionId of sessions) expect(follower.versionFor(sessionId)).toBe(inSessionCohort('canary', sessionId, 0.3) ? 1 : undefined);
    // Following again stages nothing more.
    await follower.synchronize();
    expect(staged).toHaveLength(1);

    await store.setPolicyVersionState(1, 'rolled-back', { reason: 'regressed', at: 3 });
    await follower.synchronize();
    expect(follower.routing()).toBe(false);
    expect(sessions.every((sessionId) => follower.versionFor(sessionId) === undefined)).toBe(true);
  });

  it('routes nobody when its engine cannot stage the candidate, and nobody before the candidate is staged', async () => {
    const { store } = await setUp();
    await store.setPolicyVersionState(1, 'canary', { reason: 'passed', at: 2, canary: evidence(1) });
    const unstaging = createCanaryFollower({ store, engine: { engineId: 'openai' }, logger });
    await unstaging.synchronize();
    expect(unstaging.routing()).toBe(false);
    const failing = createCanaryFollower({ store, engine: { engineId: 'test', stagePolicy: () => Promise.reject(new Error('server away')) }, logger });
    await expect(failing.synchronize()).rejects.toThrow('server away');
    expect(failing.routing()).toBe(false);
  });
});
