import { afterEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../spec/chat.js';
import type { RecordStore } from '../../spec/record-store.js';
import { encodeFloat64Blob } from '../../core/token-blob-codec.js';
import type { NewTurn } from '../../spec/records.js';
import { runRecordStoreContract } from '../record-store.contract.js';
import { newTurn } from '../testing/record-fixtures.js';
import { createPostgresRecordStore } from './create-postgres-record-store.js';
import { PostgresRecordStore } from './postgres-record-store.js';
import { dropTestSchema, openTestPostgresStore, queryTestSchema, rollBackRecordCountsSql, testPostgresUrl, uniqueTestSchema } from './testing/test-postgres.js';

let contractSchema: string | undefined;
runRecordStoreContract({
  name: 'postgres',
  createStore: async (events) => {
    contractSchema = uniqueTestSchema();
    return openTestPostgresStore(contractSchema, { events });
  },
  recount: async (store) => {
    if (!(store instanceof PostgresRecordStore)) throw new Error('expected the Postgres record store');
    return store.recount();
  },
  cleanup: async () => {
    if (contractSchema !== undefined) await dropTestSchema(contractSchema);
  },
});

function turnOf(session: string, index: number, previous: NewTurn | undefined): NewTurn {
  const system: ChatMessage = { role: 'system', content: `You tutor arithmetic. ${'Be precise. '.repeat(10)}` };
  const messages: ChatMessage[] = previous === undefined ? [system] : [...previous.messages, { ...previous.response }];
  messages.push({ role: 'user', content: `Question ${index}: what is ${index} * 7? ${'Show your work. '.repeat(8)}` });
  const newUserTokens = Array.from({ length: 40 }, (_, position) => 1_000 + ((index * 40 + position) % 30_000));
  const promptTokenIds =
    previous === undefined ? newUserTokens : [...previous.promptTokenIds, ...previous.responseTokenIds, ...newUserTokens];
  const responseTokenIds = Array.from({ length: 25 }, (_, position) => 40_000 + index * 25 + position);
  return newTurn(`${session}-turn-${index}`, {
    sessionId: session,
    messages,
    tools: [{ name: 'calculator', description: 'Evaluates arithmetic', parameters: { type: 'object' } }],
    sampling: { temperature: 0.7, topP: 1, stop: [], n: 1, topLogprobs: 0 },
    promptTokenIds,
    responseTokenIds,
    logprobs: responseTokenIds.map((id) => -Math.log1p(id / 7)),
    response: { role: 'assistant', content: `${index} * 7 = ${index * 7}. ${'Each step checked. '.repeat(6)}` },
    timings: { startedAt: index * 1_000, firstTokenAt: index * 1_000 + 5, endedAt: index * 1_000 + 50 },
    replyKey: `reply-${session}-${index}`,
    untrainableReason: null,
    supersededBy: null,
  });
}

describe('createPostgresRecordStore', () => {
  let schema: string;
  const opened: RecordStore[] = [];
  const open = async (poolSize?: number) => {
    const store = await openTestPostgresStore(schema, poolSize === undefined ? {} : { poolSize });
    opened.push(store);
    return store;
  };

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await dropTestSchema(schema);
  });

  it('never hands one queued turn to two stores claiming at once, and re-offers it when the lease expires', async () => {
    schema = uniqueTestSchema();
    const [first, second] = [await open(), await open()] as [RecordStore, RecordStore];
    await first.upsertSession({ id: 's1', tenant: null, user: null, at: 0 });
    const turnIds: string[] = [];
    let previous: NewTurn | undefined;
    for (let index = 0; index < 40; index += 1) {
      previous = turnOf('s1', index, previous);
      await first.recordTurn(previous);
      await first.linkNextState(previous.id, [{ role: 'user', content: 'ok' }], 100 + index);
      turnIds.push(previous.id);
    }
    const claimAll = async (store: RecordStore, workerId: string) => {
      const claimed: string[] = [];
      for (;;) {
        const claims = await store.claimTurnsForJudging({ limit: 3, leaseMs: 60_000, now: 1_000, workerId });
        if (claims.length === 0) return claimed;
        claimed.push(...claims.map((claim) => claim.turn.id));
      }
    };
    const claimed = await Promise.all([
      claimAll(first, 'worker-a'),
      claimAll(second, 'worker-b'),
      claimAll(first, 'worker-c'),
      claimAll(second, 'worker-d'),
    ]);
    const all = claimed.flat();
    expect(all.length).toBe(new Set(all).size);
    expect([...all].sort()).toEqual([...turnIds].sort());

    // worker-a crashed: its leases end at 61_000 and the turns go to whoever asks then.
    const abandoned = claimed[0] ?? [];
    expect(await second.claimTurnsForJudging({ limit: 100, leaseMs: 1_000, now: 60_999, workerId: 'worker-e' })).toEqual([]);
    const retaken = await second.claimTurnsForJudging({ limit: 100, leaseMs: 1_000, now: 61_000, workerId: 'worker-e' });
    expect(retaken.map((claim) => claim.turn.id).sort()).toEqual(turnIds.slice().sort());
    expect(abandoned.length).toBeGreaterThan(0);
    const [lateTurn] = abandoned;
    expect(
      await first.releaseTurn({ turnId: lateTurn as string, workerId: 'worker-a', generation: 1, outcome: { kind: 'done' } }),
    ).toBe(false);
  });

  it('never hands one ready sample to two trainers claiming at once', async () => {
    schema = uniqueTestSchema();
    const [first, second] = [await open(), await open()] as [RecordStore, RecordStore];
    await first.upsertSession({ id: 's1', tenant: null, user: null, at: 0 });
    let previous: NewTurn | undefined;
    for (let index = 0; index < 30; index += 1) {
      previous = turnOf('s1', index, previous);
      await first.recordTurn(previous);
      const response = previous.responseTokenIds.length;
      await first.recordSample({
        id: `sample-${index}`, turnId: previous.id, method: 'rl', status: 'ready', dropReason: null, policyVersion: 0,
        judgementId: null, feedbackId: null, score: 1, hint: null, group: null, lossMask: Array<number>(response).fill(1),
        distillationGaps: null, teacherLogprobs: null, support: null, createdAt: index,
      });
    }
    const claimAll = async (store: RecordStore, workerId: string) => {
      const claimed: string[] = [];
      for (;;) {
        const samples = await store.claimSamplesForTraining({ limit: 2, leaseMs: 60_000, now: 1_000, workerId });
        if (samples.length === 0) return claimed;
        claimed.push(...samples.map((sample) => sample.id));
      }
    };
    const all = (await Promise.all([claimAll(first, 'a'), claimAll(second, 'b'), claimAll(first, 'c'), claimAll(second, 'd')])).flat();
    expect(all.length).toBe(30);
    expect(new Set(all).size).toBe(30);
  });

  it('migrates once when several processes open a new schema at the same time', async () => {
    schema = uniqueTestSchema();
    const stores = await Promise.all(Array.from({ length: 4 }, () => open(1)));
    expect(stores).toHaveLength(4);
    const versions = await queryTestSchema<{ version: number }>(schema, 'SELECT version FROM schema_migrations ORDER BY version');
    expect(versions.map((row) => row.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  it('keeps the samples judged before migration 4 on their judged advantages, and lets the methods be checked above the database', async () => {
    schema = uniqueTestSchema();
    const first = await open();
    await first.upsertSession({ id: 's1', tenant: null, user: null, at: 0 });
    const turn = turnOf('s1', 0, undefined);
    await first.recordTurn(turn);
    await first.close();
    // The samples table as schema 3 had it, with a sample as the judge stored it then.
    await queryTestSchema(schema, rollBackRecordCountsSql);
    await queryTestSchema(schema, `ALTER TABLE samples DROP COLUMN distillation_gaps;
      ALTER TABLE samples RENAME COLUMN judged_advantages TO advantages;
      ALTER TABLE samples ALTER COLUMN advantages SET NOT NULL;
      ALTER TABLE samples ADD CONSTRAINT samples_method_check CHECK (method IN ('rl', 'opd', 'combine'));
      ALTER TABLE feedback DROP COLUMN rollout;
      DELETE FROM schema_migrations WHERE version >= 4;`);
    const length = turn.responseTokenIds.length;
    const judged = Array.from({ length }, (_, index) => 0.5 + index / 100);
    const teacher = turn.logprobs.map((logprob) => logprob + 0.25);
    const support = [[{ id: 7, studentLogprob: -1, teacherLogprob: -0.5, advantage: 0.5, weightedAdvantage: 0.3 }], ...Array.from({ length: length - 1 }, () => [])];
    await queryTestSchema(
      schema,
      `INSERT INTO samples (id, turn_ordinal, method, status, policy_version, score, hint, loss_mask, advantages, teacher_logprobs, support, created_at, updated_at)
       VALUES ('old', (SELECT ordinal FROM turns WHERE id = $1), 'combine', 'ready', 0, 1, 'h', $2, $3, $4, $5, 5, 5)`,
      [turn.id, encodeFloat64Blob(Array<number>(length).fill(1), 'lossMask'), encodeFloat64Blob(judged, 'advantages'), encodeFloat64Blob(teacher, 'teacher'), JSON.stringify(support)],
    );
    const upgraded = await open();
    const [claimed] = await upgraded.claimSamplesForTraining({ limit: 10, leaseMs: 1_000, now: 10, workerId: 'trainer' });
    expect(claimed?.judgedAdvantages).toEqual({ advantages: judged, support: [{ tokenIds: [7], advantages: [0.3] }, ...Array.from({ length: length - 1 }, () => ({ tokenIds: [], advantages: [] }))] });
    expect(claimed?.distillationGaps?.map((gap) => Number(gap.toFixed(12)))).toEqual(Array<number>(length).fill(0.25));
    await upgraded.close();
    expect(await queryTestSchema(schema, "SELECT conname FROM pg_constraint WHERE conname = 'samples_method_check'")).toEqual([]);
    await queryTestSchema(schema, "UPDATE samples SET method = 'grpo'");
    const reopened = await open();
    await expect(reopened.listSamples()).rejects.toMatchObject({ code: 'store_error', message: expect.stringContaining('"grpo"') });
    await reopened.close();
  });

  it('refuses a schema written by a newer clawrl', async () => {
    schema = uniqueTestSchema();
    await (await open()).close();
    await queryTestSchema(schema, 'INSERT INTO schema_migrations (version) VALUES (99)');
    await expect(open()).rejects.toMatchObject({ code: 'store_error', message: expect.stringContaining('newer') });
  });

  it('stores a 100-turn session in space linear in its length and rebuilds every turn exactly', async () => {
    schema = uniqueTestSchema();
    const store = await open();
    await store.upsertSession({ id: 'long', tenant: null, user: null, at: 0 });
    const turns: NewTurn[] = [];
    for (let index = 0; index < 100; index += 1) {
      turns.push(turnOf('long', index, turns.at(-1)));
      await store.recordTurn(turns.at(-1) as NewTurn);
    }
    for (const [index, turn] of turns.entries()) {
      expect(await store.getTurn(turn.id)).toEqual({ ...turn, index, nextState: null, nextStateAt: null });
    }
    const finalTurn = turns[99] as NewTurn;
    const finalMessageBytes = finalTurn.messages.reduce((total, message) => total + Buffer.byteLength(JSON.stringify(message)), 0);
    const [stored] = await queryTestSchema<{ message_bytes: number; token_bytes: number; tool_sets: number }>(
      schema,
      `SELECT (SELECT sum(octet_length(body)) FROM message_nodes)::integer AS message_bytes,
         (SELECT sum(octet_length(prompt_suffix) + octet_length(response_token_ids)) FROM turns)::integer AS token_bytes,
         (SELECT count(*) FROM tool_sets)::integer AS tool_sets`,
    );
    // Without prefix sharing both would be ~50 times the final turn's size.
    expect(stored?.message_bytes).toBeLessThan(3 * finalMessageBytes);
    expect(stored?.token_bytes).toBeLessThan(3 * finalTurn.promptTokenIds.length * 4);
    expect(stored?.tool_sets).toBe(1);

    // A second process continues the session and diffs against turns it never wrote.
    const other = await open();
    const next = turnOf('long', 100, finalTurn);
    expect((await other.recordTurn(next)).index).toBe(100);
    expect(await other.getTurn(next.id)).toEqual({ ...next, index: 100, nextState: null, nextStateAt: null });
    const [link] = await queryTestSchema<{ prompt_prefix_length: number }>(
      schema,
      'SELECT prompt_prefix_length FROM turns WHERE id = $1',
      [next.id],
    );
    expect(link?.prompt_prefix_length).toBe(finalTurn.promptTokenIds.length + 25);
  });

  it('stores the system prompt that opens many sessions once, and rebuilds each first turn exactly', async () => {
    schema = uniqueTestSchema();
    const store = await open();
    const systemPromptIds = Array.from({ length: 3_000 }, (_, position) => 2_000 + ((position * 7919) % 30_000));
    const turns: NewTurn[] = [];
    for (let session = 0; session < 20; session += 1) {
      await store.upsertSession({ id: `s${session}`, tenant: null, user: null, at: session });
      const promptTokenIds = [...systemPromptIds, ...Array.from({ length: 40 }, (_, position) => session * 40 + position)];
      turns.push({ ...turnOf(`s${session}`, 0, undefined), promptTokenIds });
      await store.recordTurn(turns.at(-1) as NewTurn);
    }
    for (const turn of turns) expect((await store.getTurn(turn.id))?.promptTokenIds).toEqual(turn.promptTokenIds);
    const [stored] = await queryTestSchema<{ prompt_bytes: number; rooted: number }>(
      schema,
      `SELECT sum(octet_length(prompt_suffix))::integer AS prompt_bytes,
         count(*) FILTER (WHERE prompt_base_ordinal IS NULL)::integer AS rooted FROM turns`,
    );
    // Whole, it would be 20 × 3,040 ids × 4 bytes.
    expect(stored).toEqual({ prompt_bytes: (3_040 + 19 * 40) * 4, rooted: 1 });
  });

  it('records a session\'s first turn after another process erased the root this one remembered as its base', async () => {
    schema = uniqueTestSchema();
    const [writer, eraser] = [await open(), await open()] as [RecordStore, RecordStore];
    const shared = Array.from({ length: 300 }, (_, index) => 100 + index);
    await writer.upsertSession({ id: 'root', tenant: null, user: null, at: 0 });
    await writer.recordTurn(newTurn('root-turn', { sessionId: 'root', promptTokenIds: shared }));
    await eraser.erase({ kind: 'session', sessionId: 'root' }, 10);
    await writer.upsertSession({ id: 'next', tenant: null, user: null, at: 20 });
    const next = newTurn('next-turn', { sessionId: 'next', promptTokenIds: [...shared, 1, 2] });
    await writer.recordTurn(next);
    expect((await writer.getTurn('next-turn'))?.promptTokenIds).toEqual(next.promptTokenIds);
  });

  it('rejects a bad schema name, and names the server without its password when it cannot connect', async () => {
    schema = uniqueTestSchema();
    await expect(createPostgresRecordStore({ connectionString: testPostgresUrl, schema: 'Robert"; DROP' })).rejects.toMatchObject({
      code: 'configuration_error',
    });
    await expect(
      createPostgresRecordStore({ connectionString: `${testPostgresUrl}?options=-c%20search_path%3Dpublic`, schema }),
    ).rejects.toMatchObject({ code: 'configuration_error' });
    const failure = createPostgresRecordStore({ connectionString: 'postgres://clawrl:secret@127.0.0.1:1/test', schema });
    await expect(failure).rejects.toMatchObject({ code: 'store_error', message: expect.stringContaining('127.0.0.1:1') });
    await expect(failure).rejects.not.toMatchObject({ message: expect.stringContaining('secret') });
  });

  it('fails every call after close with store_error and closes idempotently', async () => {
    schema = uniqueTestSchema();
    const store = await open();
    await store.close();
    await store.close();
    await expect(store.getSession('s1')).rejects.toMatchObject({ code: 'store_error' });
  });
});
