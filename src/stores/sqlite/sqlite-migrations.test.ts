import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeFloat64Blob } from '../../core/token-blob-codec.js';
import type { NewTurn } from '../../spec/records.js';
import { createSqliteRecordStore } from './create-sqlite-record-store.js';
import { SqliteRecordStore } from './sqlite-record-store.js';
import { rollBackErasureLineage, rollBackPolicyScope, rollBackRecordCounts } from './testing/roll-back-record-counts.js';
import { rollBackSampleMeasures } from './testing/roll-back-sample-measures.js';

function turnOf(id: string): NewTurn {
  return {
    id, sessionId: 's', type: 'main', status: 'completed', trainable: true, tenant: null, user: null, model: 'tiny', policyVersion: 0,
    messages: [{ role: 'user', content: `question ${id}` }], tools: [], sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
    promptTokenIds: [1, 2, 3], responseTokenIds: [4, 5], logprobs: [-0.5, -1], response: { role: 'assistant', content: 'answer' },
    finishReason: 'stop', timings: { startedAt: 1, firstTokenAt: 2, endedAt: 3 }, error: null, replyKey: null,
  };
}

const float64 = (values: number[]) => encodeFloat64Blob(values, 'test');

describe('SQLite migration 5: samples store what the judge measured, the method unconstrained', () => {
  let directory: string;
  let path: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'clawrl-migration-'));
    path = join(directory, 'records.db');
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('keeps the samples judged before it on their judged advantages, and lets the methods be checked above the database', async () => {
    const store = createSqliteRecordStore({ path });
    await store.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
    for (const id of ['a', 'b', 'c']) await store.recordTurn(turnOf(id));
    await store.close();
    // Samples as schema 4 stored them: the judge's w_rl·r + w_opd·clip(Δ), and w_opd·w·clip(Δ) on each support token.
    const database = new Database(path);
    rollBackSampleMeasures(database);
    const insert = database.prepare(`INSERT INTO samples (id, turn_ordinal, method, status, drop_reason, policy_version, judgement_id, feedback_id,
        score, hint, loss_mask, advantages, teacher_logprobs, support, created_at, updated_at)
      VALUES (?, (SELECT ordinal FROM turns WHERE id = ?), ?, ?, ?, 0, NULL, NULL, ?, ?, ?, ?, ?, ?, 5, 5)`);
    const support = [[{ id: 7, studentLogprob: -1, teacherLogprob: -0.5, advantage: 0.5, weightedAdvantage: 0.3 }, { id: 9, studentLogprob: -2, teacherLogprob: null, advantage: null, weightedAdvantage: null }], []];
    insert.run('old-combine', 'a', 'combine', 'ready', null, 1, 'h', float64([1, 1]), float64([0.5, 0.5]), float64([-0.25, -3]), JSON.stringify(support));
    insert.run('old-rl', 'b', 'rl', 'ready', null, -1, null, float64([1, 1]), float64([-1, -1]), null, null);
    insert.run('old-dropped', 'c', 'opd', 'dropped', 'no-hint', null, null, float64([]), float64([]), null, null);
    database.close();

    const upgraded = createSqliteRecordStore({ path });
    const claimed = await upgraded.claimSamplesForTraining({ limit: 10, leaseMs: 1_000, now: 10, workerId: 'trainer' });
    expect(claimed.map((sample) => [sample.id, sample.judgedAdvantages])).toEqual([
      ['old-combine', { advantages: [0.5, 0.5], support: [{ tokenIds: [7], advantages: [0.3] }, { tokenIds: [], advantages: [] }] }],
      ['old-rl', { advantages: [-1, -1], support: null }],
    ]);
    // What can be derived exactly is derived: teacher − rollout where the teacher's log-probs were kept.
    expect(claimed[0]).toMatchObject({ method: 'combine', score: 1, distillationGaps: [0.25, -2], teacherLogprobs: [-0.25, -3], support: null });
    expect(claimed[1]).toMatchObject({ method: 'rl', score: -1, distillationGaps: null });
    // A sample judged since carries no judged advantages.
    const fresh = await upgraded.recordSample({
      id: 'new', turnId: 'c', method: 'opd', status: 'ready', dropReason: null, policyVersion: 0, judgementId: null, feedbackId: null,
      score: null, hint: 'h', group: null, lossMask: [1, 1], distillationGaps: [0.25, -2], teacherLogprobs: [-0.25, -3], support: null, createdAt: 20,
    });
    expect(fresh).toMatchObject({ judgedAdvantages: null, distillationGaps: [0.25, -2] });
    await upgraded.close();

    // The database no longer constrains the method; the store refuses one it does not know when it reads it.
    const raw = new Database(path);
    expect(raw.prepare("SELECT sql FROM sqlite_master WHERE name = 'samples'").pluck().get()).not.toContain('method IN');
    raw.prepare("UPDATE samples SET method = 'grpo' WHERE id = 'old-rl'").run();
    raw.close();
    const reopened = createSqliteRecordStore({ path });
    await expect(reopened.listSamples()).rejects.toMatchObject({ code: 'store_error', message: expect.stringContaining('"grpo"') });
    await reopened.close();
  });
});

describe('SQLite migration 8: the counts of /admin/status as counters', () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'clawrl-migration-'));
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('starts the counters from the rows written before it, and keeps them across a reopen', async () => {
    const path = join(directory, 'records.db');
    const store = createSqliteRecordStore({ path });
    await store.upsertSession({ id: 's', tenant: null, user: null, at: 1 });
    for (const id of ['a', 'b', 'c']) await store.recordTurn(turnOf(id));
    await store.linkNextState('a', [{ role: 'user', content: 'ok' }], 4);
    await store.recordFeedback({ turnId: 'b', score: 1, text: null, hint: null, tenant: null, user: null, createdAt: 5 });
    await store.closeSession('s', 'done', 6);
    const before = await store.counts();
    await store.close();
    const database = new Database(path);
    rollBackRecordCounts(database);
    database.close();
    const upgraded = createSqliteRecordStore({ path });
    try {
      expect(await upgraded.counts()).toEqual(before);
      expect(before).toMatchObject({ sessions: { open: 0, closed: 1 }, turns: { main: 3 }, linked: 1, judging: { judged: 1, pending: 2, withoutNextState: 1 } });
      if (!(upgraded instanceof SqliteRecordStore)) throw new Error('expected the SQLite record store');
      expect(await upgraded.counts()).toEqual(await upgraded.recount());
    } finally {
      await upgraded.close();
    }
  });
});

describe('SQLite migration 10: policy versions have a lifecycle state', () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'clawrl-migration-'));
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('gives the versions recorded before it the state their activations show', async () => {
    const path = join(directory, 'records.db');
    const store = createSqliteRecordStore({ path });
    for (const version of [0, 1, 2, 3]) {
      const policy = { version, parent: version === 0 ? null : version - 1, kind: 'base' as const, files: {}, step: null, samples: 0, metrics: null, createdAt: version };
      await store.recordPolicyVersion(policy, { activate: true });
    }
    await store.activatePolicyVersion(1, 10);
    await store.close();
    const database = new Database(path);
    // Migrations 12 (lineage) and 11 (turns' untrainable reason) go first, then 10 itself.
    rollBackErasureLineage(database);
    database.exec(`DROP TRIGGER record_counts_turn_trainable; ALTER TABLE turns DROP COLUMN untrainable_reason; ALTER TABLE turns DROP COLUMN superseded_by;
      ALTER TABLE policy_versions DROP COLUMN state; ALTER TABLE policy_versions DROP COLUMN state_reason;
      ALTER TABLE policy_versions DROP COLUMN state_changed_at; ALTER TABLE policy_versions DROP COLUMN gate;
      ALTER TABLE policy_versions DROP COLUMN canary; DELETE FROM schema_migrations WHERE version >= 10;`);
    database.close();
    const upgraded = createSqliteRecordStore({ path });
    try {
      expect((await upgraded.listPolicyVersions()).map((entry) => [entry.version, entry.state, entry.active, entry.gate])).toEqual([
        [0, 'retired', false, null],
        [1, 'active', true, null],
        [2, 'rolled-back', false, null],
        [3, 'rolled-back', false, null],
      ]);
      expect((await upgraded.listPolicyVersions())[0]?.stateReason).toBe('superseded before states were recorded');
    } finally {
      await upgraded.close();
    }
  });
});

describe('SQLite migration 14: samples and policy versions carry a user', () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'clawrl-migration-'));
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('gives the samples built before it their turn\'s user, and the versions recorded before it to the global lineage', async () => {
    const path = join(directory, 'records.db');
    const store = createSqliteRecordStore({ path });
    await store.upsertSession({ id: 's', tenant: 'acme', user: 'acme/ann', at: 1 });
    await store.recordTurn({ ...turnOf('a'), tenant: 'acme', user: 'acme/ann' });
    await store.recordSample({
      id: 'sample-a', turnId: 'a', method: 'rl', status: 'ready', dropReason: null, policyVersion: 0, judgementId: null, feedbackId: null,
      score: 1, group: null, hint: null, lossMask: [1, 1], distillationGaps: null, teacherLogprobs: null, support: null, createdAt: 2,
    });
    await store.recordPolicyVersion({ version: 0, parent: null, kind: 'base', files: {}, step: null, samples: 0, metrics: null, createdAt: 3 }, { activate: true });
    await store.close();
    const database = new Database(path);
    rollBackPolicyScope(database);
    database.close();
    const upgraded = createSqliteRecordStore({ path });
    try {
      expect((await upgraded.listSamples({ turnId: 'a' }))[0]?.user).toBe('acme/ann');
      expect(await upgraded.readySamplesByUser(10)).toEqual([{ user: 'acme/ann', ready: 1 }]);
      expect((await upgraded.listPolicyVersions()).map((entry) => [entry.version, entry.user, entry.active])).toEqual([[0, null, true]]);
      expect(await upgraded.trainingSummary()).toMatchObject({ activeVersion: 0 });
    } finally {
      await upgraded.close();
    }
  });
});
