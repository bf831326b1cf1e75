import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { NewTurn, StoreCounts } from '../../spec/records.js';
import { runRecordStoreContract } from '../record-store.contract.js';
import { canonicalJson } from '../canonical-json.js';
import { createSqliteRecordStore } from './create-sqlite-record-store.js';
import { SqliteRecordStore } from './sqlite-record-store.js';
import { rollBackSampleMeasures } from './testing/roll-back-sample-measures.js';

async function recountSqlite(store: RecordStore): Promise<StoreCounts> {
  if (!(store instanceof SqliteRecordStore)) throw new Error('expected the SQLite record store');
  return store.recount();
}

runRecordStoreContract({
  name: 'sqlite :memory:',
  createStore: async (events) => createSqliteRecordStore({ path: ':memory:', events }),
  recount: recountSqlite,
});

let fileDirectory: string | undefined;
runRecordStoreContract({
  name: 'sqlite file',
  createStore: async (events) => {
    fileDirectory = mkdtempSync(join(tmpdir(), 'clawrl-store-'));
    return createSqliteRecordStore({ path: join(fileDirectory, 'nested', 'records.db'), events });
  },
  recount: recountSqlite,
  cleanup: async () => {
    if (fileDirectory !== undefined) rmSync(fileDirectory, { recursive: true, force: true });
  },
});

describe('createSqliteRecordStore on a file', () => {
  let directory: string;
  let path: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'clawrl-store-'));
    path = join(directory, 'records.db');
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('with neverWait, waits for another connection\'s lock without blocking: the thread runs on, reads answer, the write lands after', async () => {
    const store = createSqliteRecordStore({ path, neverWait: true });
    await store.upsertSession({ id: 'before', tenant: null, user: null, at: 1 });
    const holder = new Database(path);
    try {
      holder.exec('BEGIN IMMEDIATE');
      const touched = store.upsertSession({ id: 'during', tenant: null, user: null, at: 2 });
      for (let tick = 0; tick < 5; tick += 1) await new Promise((resolve) => setTimeout(resolve, 2));
      expect(await store.getSession('before')).not.toBeNull();
      expect(await store.getSession('during')).toBeNull();
      holder.exec('COMMIT');
      await touched;
      expect(await store.getSession('during')).not.toBeNull();
    } finally {
      holder.close();
      await store.close();
    }
  });

  it('with neverWait, commits at close a write that was waiting for another connection\'s lock', async () => {
    const store = createSqliteRecordStore({ path, neverWait: true });
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    const touched = store.upsertSession({ id: 'queued', tenant: null, user: null, at: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    holder.exec('COMMIT');
    holder.close();
    // Closed in the same tick, before the write's next try: the close commits it.
    await store.close();
    await touched;
    const reopened = createSqliteRecordStore({ path });
    expect(await reopened.getSession('queued')).not.toBeNull();
    await reopened.close();
  });

  function turnOf(session: string, index: number, previous: NewTurn | undefined): NewTurn {
    const system: ChatMessage = { role: 'system', content: `You tutor arithmetic. ${'Be precise. '.repeat(10)}` };
    const messages: ChatMessage[] =
      previous === undefined ? [system] : [...previous.messages, { ...previous.response }];
    const question = `Question ${index}: what is ${index} * 7? ${'Show your work. '.repeat(8)}`;
    messages.push({ role: 'user', content: question });
    const newUserTokens = Array.from({ length: 40 }, (_, position) => 1_000 + ((index * 40 + position) % 30_000));
    const promptTokenIds =
      previous === undefined
        ? newUserTokens
        : [...previous.promptTokenIds, ...previous.responseTokenIds, ...newUserTokens];
    const responseTokenIds = Array.from({ length: 25 }, (_, position) => 40_000 + index * 25 + position);
    return {
      id: `${session}-turn-${index}`,
      sessionId: session,
      type: 'main',
      status: 'completed',
      trainable: true,
      tenant: null, user: null,
      model: 'builtin:tiny',
      policyVersion: Math.floor(index / 10),
      messages,
      tools: [{ name: 'calculator', description: 'Evaluates arithmetic', parameters: { type: 'object' } }],
      sampling: { temperature: 0.7, topP: 1, stop: [], n: 1, topLogprobs: 0 },
      promptTokenIds,
      responseTokenIds,
      logprobs: responseTokenIds.map((id) => -Math.log1p(id / 7)),
      response: { role: 'assistant', content: `${index} * 7 = ${index * 7}. ${'Each step checked. '.repeat(6)}` },
      finishReason: 'stop',
      timings: { startedAt: index * 1_000, firstTokenAt: index * 1_000 + 5, endedAt: index * 1_000 + 50 },
      error: null,
      replyKey: `reply-${session}-${index}`,
      untrainableReason: null,
      supersededBy: null,
    };
  }

  it('stores a 100-turn session in space linear in its length and rebuilds every turn exactly', async () => {
    const store = createSqliteRecordStore({ path });
    await store.upsertSession({ id: 'long', tenant: null, user: null, at: 0 });
    const turns: NewTurn[] = [];
    for (let index = 0; index < 100; index += 1) {
      const turn = turnOf('long', index, turns.at(-1));
      turns.push(turn);
      await store.recordTurn(turn);
    }
    for (const [index, turn] of turns.entries()) {
      expect(await store.getTurn(turn.id)).toEqual({ ...turn, index, nextState: null, nextStateAt: null });
    }
    await store.close();

    const finalTurn = turns[99] as NewTurn;
    const finalMessageBytes = finalTurn.messages.reduce(
      (total, message) => total + Buffer.byteLength(canonicalJson(message)),
      0,
    );
    const responseTokens = turns.reduce((total, turn) => total + turn.responseTokenIds.length, 0);
    const database = new Database(path, { readonly: true });
    const stored = database
      .prepare<[], { messageBytes: number; tokenBytes: number; logprobBytes: number; toolSets: number }>(
        `SELECT
           (SELECT sum(length(CAST(body AS BLOB))) FROM message_nodes) AS messageBytes,
           (SELECT sum(length(prompt_suffix) + length(response_token_ids)) FROM turns) AS tokenBytes,
           (SELECT sum(length(logprobs)) FROM turns) AS logprobBytes,
           (SELECT count(*) FROM tool_sets) AS toolSets`,
      )
      .get();
    database.close();
    // Without prefix sharing both would be ~50 times the final turn's size.
    expect(stored?.messageBytes).toBeLessThan(3 * finalMessageBytes);
    expect(stored?.tokenBytes).toBeLessThan(3 * finalTurn.promptTokenIds.length * 4);
    expect(stored?.logprobBytes).toBe(responseTokens * 8);
    expect(stored?.toolSets).toBe(1);
  });

  // An agent's system prompt and tool schemas, the same ids at the start of every session.
  const systemPromptIds = Array.from({ length: 3_000 }, (_, position) => 2_000 + ((position * 7919) % 30_000));
  const firstTurnOf = (session: string, promptTokenIds: number[]): NewTurn => ({
    ...turnOf(session, 0, undefined),
    id: `${session}-first`,
    promptTokenIds,
  });

  it('stores the system prompt that opens many sessions once, and rebuilds each first turn exactly', async () => {
    const store = createSqliteRecordStore({ path });
    const turns: NewTurn[] = [];
    for (let session = 0; session < 20; session += 1) {
      await store.upsertSession({ id: `s${session}`, tenant: null, user: null, at: session });
      const turn = firstTurnOf(`s${session}`, [...systemPromptIds, ...Array.from({ length: 40 }, (_, position) => session * 40 + position)]);
      turns.push(turn);
      await store.recordTurn(turn);
    }
    for (const turn of turns) expect((await store.getTurn(turn.id))?.promptTokenIds).toEqual(turn.promptTokenIds);
    await store.close();
    const database = new Database(path, { readonly: true });
    const promptBytes = database.prepare('SELECT sum(length(prompt_suffix)) FROM turns').pluck().get() as number;
    const bases = database.prepare('SELECT prompt_base_ordinal FROM turns ORDER BY ordinal').pluck().all();
    database.close();
    // Whole, it would be 20 × 3,040 ids × 4 bytes.
    expect(promptBytes).toBe((3_040 + 19 * 40) * 4);
    expect(bases).toEqual([null, ...Array<number>(19).fill(1)]);
  });

  it('never bases a session on a first turn whose transaction rolled back', async () => {
    const store = createSqliteRecordStore({ path });
    for (const session of ['failed', 'other', 'later']) await store.upsertSession({ id: session, tenant: null, user: null, at: 0 });
    // Queued together, so one transaction: the rolled-back root's ordinal goes to the next turn.
    const [failed, kept] = await Promise.allSettled([
      store.recordTurn(firstTurnOf('failed', [...systemPromptIds, 2.5])),
      store.recordTurn(firstTurnOf('other', Array.from({ length: 400 }, (_, position) => 90_000 + position))),
    ]);
    expect([failed.status, kept.status]).toEqual(['rejected', 'fulfilled']);
    const later = firstTurnOf('later', [...systemPromptIds, 5]);
    await store.recordTurn(later);
    expect((await store.getTurn(later.id))?.promptTokenIds).toEqual(later.promptTokenIds);
    await store.close();
  });

  it('keeps sessions and turns across a reopen and keeps diffing prompts against stored turns', async () => {
    const first = createSqliteRecordStore({ path });
    await first.upsertSession({ id: 's1', tenant: 'alice', user: 'alice', at: 10 });
    const turn0 = turnOf('s1', 0, undefined);
    const turn1 = turnOf('s1', 1, turn0);
    await first.recordTurn(turn0);
    await first.recordTurn(turn1);
    await first.linkNextState(turn0.id, [{ role: 'user', content: 'next' }], 20);
    await first.close();

    const second = createSqliteRecordStore({ path });
    const turn2 = turnOf('s1', 2, turn1);
    expect((await second.recordTurn(turn2)).index).toBe(2);
    expect(await second.getSession('s1')).toMatchObject({ tenant: 'alice', user: 'alice', turnIds: [turn0.id, turn1.id, turn2.id] });
    expect(await second.getTurn(turn0.id)).toMatchObject({ nextState: [{ role: 'user', content: 'next' }] });
    expect(await second.getTurn(turn2.id)).toEqual({ ...turn2, index: 2, nextState: null, nextStateAt: null });
    await second.close();

    const database = new Database(path, { readonly: true });
    expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(database.prepare('SELECT version FROM schema_migrations').all()).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }, { version: 5 }, { version: 6 }, { version: 7 }, { version: 8 }, { version: 9 }, { version: 10 }, { version: 11 }, { version: 12 }, { version: 13 }, { version: 14 }, { version: 15 }]);
    const prefixes = database.prepare('SELECT prompt_prefix_length FROM turns ORDER BY ordinal').pluck().all();
    database.close();
    expect(prefixes).toEqual([0, turn0.promptTokenIds.length + 25, turn1.promptTokenIds.length + 25]);
  });

  /** A closed store file holding session s1's turns 0 and 1, turn 0 linked at 20. */
  async function recordTwoTurnsAndLinkTheFirst(): Promise<[NewTurn, NewTurn]> {
    const store = createSqliteRecordStore({ path });
    await store.upsertSession({ id: 's1', tenant: null, user: null, at: 10 });
    const turn0 = turnOf('s1', 0, undefined);
    const turn1 = turnOf('s1', 1, turn0);
    await store.recordTurn(turn0);
    await store.recordTurn(turn1);
    await store.linkNextState(turn0.id, [{ role: 'user', content: 'next' }], 20);
    await store.close();
    return [turn0, turn1];
  }

  /** Undoes migration 4: next states back in the turn's row, as schemas 1–3 kept them. */
  function rollBackNextStates(database: Database.Database): void {
    rollBackSampleMeasures(database);
    database.exec(`ALTER TABLE turns ADD COLUMN next_state TEXT; ALTER TABLE turns ADD COLUMN next_state_at INTEGER;
      UPDATE turns SET
        next_state = (SELECT next_state FROM turn_next_states WHERE turn_ordinal = turns.ordinal),
        next_state_at = (SELECT linked_at FROM turn_next_states WHERE turn_ordinal = turns.ordinal);
      DROP TABLE turn_next_states; DELETE FROM schema_migrations WHERE version >= 4;`);
  }

  it('moves the next states linked before migration 4 into their own table, and links each turn once still', async () => {
    const [turn0, turn1] = await recordTwoTurnsAndLinkTheFirst();
    const database = new Database(path);
    rollBackNextStates(database);
    expect(database.prepare('SELECT next_state_at FROM turns ORDER BY ordinal').pluck().all()).toEqual([20, null]);
    database.close();

    const upgraded = createSqliteRecordStore({ path });
    expect(await upgraded.getTurn(turn0.id)).toMatchObject({ nextState: [{ role: 'user', content: 'next' }], nextStateAt: 20 });
    expect(await upgraded.getTurn(turn1.id)).toMatchObject({ nextState: null, nextStateAt: null });
    expect(await upgraded.linkNextState(turn0.id, [{ role: 'user', content: 'again' }], 30)).toBe(false);
    expect(await upgraded.getLastMainTurn('s1')).toEqual({ id: turn1.id, replyKey: turn1.replyKey, linked: false });
    expect(await upgraded.linkNextState(turn1.id, [{ role: 'user', content: 'later' }], 40)).toBe(true);
    expect(await upgraded.getLastMainTurn('s1')).toMatchObject({ linked: true });
    expect(await upgraded.counts()).toMatchObject({ linked: 2 });
    await upgraded.close();
    const reopened = new Database(path, { readonly: true });
    expect(reopened.prepare('SELECT turn_ordinal, linked_at FROM turn_next_states ORDER BY turn_ordinal').all()).toEqual([
      { turn_ordinal: 1, linked_at: 20 },
      { turn_ordinal: 2, linked_at: 40 },
    ]);
    reopened.close();
  });

  it('queues the turns linked before the judging migration when it runs', async () => {
    const [turn0] = await recordTwoTurnsAndLinkTheFirst();
    // Roll the file back to schema 1, as a database written before migration 2 would be.
    const database = new Database(path);
    rollBackNextStates(database);
    database.exec(`DROP TABLE training_steps; DROP TABLE policy_activations; DROP TABLE policy_files; DROP TABLE policy_versions;
      DROP TABLE judge_queue; DROP TABLE judgements; DROP TABLE feedback; DROP TABLE samples;
      DELETE FROM schema_migrations WHERE version >= 2;`);
    database.close();

    const upgraded = createSqliteRecordStore({ path });
    const claims = await upgraded.claimTurnsForJudging({ limit: 10, leaseMs: 1_000, now: 100, workerId: 'w' });
    expect(claims.map((claim) => claim.turn.id)).toEqual([turn0.id]);
    await upgraded.close();
  });

  it('refuses a database written by a newer schema', async () => {
    await createSqliteRecordStore({ path }).close();
    const database = new Database(path);
    database.prepare('INSERT INTO schema_migrations (version) VALUES (99)').run();
    database.close();
    let failure: unknown;
    try {
      createSqliteRecordStore({ path });
    } catch (error) {
      failure = error;
    }
    expect(ClawrlError.isInstance(failure) && failure.code === 'store_error').toBe(true);
    expect(String(failure)).toContain('newer');
  });

  it('rejects token ids that are not 32-bit integers without recording the turn', async () => {
    const store = createSqliteRecordStore({ path: ':memory:' });
    await store.upsertSession({ id: 's1', tenant: null, user: null, at: 0 });
    const bad = { ...turnOf('s1', 0, undefined), responseTokenIds: [1, 2 ** 31] };
    await expect(store.recordTurn(bad)).rejects.toMatchObject({ code: 'store_error' });
    expect(await store.getTurn(bad.id)).toBeNull();
    expect(await store.getSession('s1')).toMatchObject({ turnIds: [] });
    expect((await store.recordTurn(turnOf('s1', 0, undefined))).index).toBe(0);
    await store.close();
  });

  it('group-commits concurrent turns: a failing one rejects alone and leaves no node another turn could reuse', async () => {
    const store = createSqliteRecordStore({ path });
    await store.upsertSession({ id: 's1', tenant: null, user: null, at: 0 });
    const system: ChatMessage = { role: 'system', content: 'You tutor arithmetic.' };
    const turnWith = (id: string, question: string, promptTokenIds: number[]): NewTurn => ({
      ...turnOf('s1', 0, undefined),
      id,
      type: 'side',
      messages: [system, { role: 'user', content: question }],
      promptTokenIds,
    });
    // Queued together, so they run in one transaction; the second fails after storing its messages.
    const [kept, failed, alsoKept] = await Promise.allSettled([
      store.recordTurn(turnWith('kept', 'first question', [1, 2])),
      store.recordTurn(turnWith('failed', 'rolled back question', [1, 2.5])),
      store.recordTurn(turnWith('also-kept', 'third question', [1, 3])),
    ]);
    expect([kept.status, failed.status, alsoKept.status]).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(failed.status === 'rejected' && (failed.reason as ClawrlError).code).toBe('store_error');
    expect(await store.getTurn('failed')).toBeNull();
    // The rolled-back node's row id is taken by another message now; the rolled-back question must
    // be stored afresh, not found in the chain's memory under that id.
    await store.recordTurn(turnWith('other', 'a different question', [1, 4]));
    await store.recordTurn(turnWith('retried', 'rolled back question', [1, 5]));
    expect((await store.getTurn('retried'))?.messages).toEqual([system, { role: 'user', content: 'rolled back question' }]);
    expect((await store.getTurn('other'))?.messages).toEqual([system, { role: 'user', content: 'a different question' }]);
    await store.close();
  });

  it('fails every call after close with store_error', async () => {
    const store = createSqliteRecordStore({ path: ':memory:' });
    await store.close();
    await expect(store.getSession('s1')).rejects.toMatchObject({ code: 'store_error' });
  });
});
