import { afterEach, describe, expect, it } from 'vitest';
import type { RecordStore } from '../../spec/record-store.js';
import { judgement, newTurn as turn } from '../testing/record-fixtures.js';
import { PostgresRecordStore } from './postgres-record-store.js';
import { dropTestSchema, openTestPostgresStore, queryTestSchema, rollBackRecordCountsSql, uniqueTestSchema } from './testing/test-postgres.js';

async function recount(store: RecordStore) {
  if (!(store instanceof PostgresRecordStore)) throw new Error('expected the Postgres record store');
  return store.recount();
}

describe('the Postgres store counters', () => {
  let schema: string | undefined;
  const opened: RecordStore[] = [];
  const open = async (): Promise<RecordStore> => {
    const store = await openTestPostgresStore(schema ?? '');
    opened.push(store);
    return store;
  };

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    if (schema !== undefined) await dropTestSchema(schema);
    schema = undefined;
  });

  it('start from the rows written before migration 7', async () => {
    schema = uniqueTestSchema();
    const first = await open();
    await first.upsertSession({ id: 's1', tenant: null, user: null, at: 100 });
    for (const id of ['a', 'b', 'c']) await first.recordTurn(turn(id));
    await first.linkNextState('a', [{ role: 'user', content: 'ok' }], 200);
    await first.recordFeedback({ turnId: 'b', score: 1, text: null, hint: null, tenant: null, user: null, createdAt: 300 });
    await first.recordJudgement(judgement('a', { latencyMs: 70 }));
    await first.closeSession('s1', 'done', 400);
    const before = await first.counts();
    await first.close();
    await queryTestSchema(schema, rollBackRecordCountsSql);
    const upgraded = await open();
    expect(await upgraded.counts()).toEqual(before);
    expect(before).toMatchObject({ sessions: { closed: 1 }, linked: 1, judging: { judged: 2, withoutNextState: 1, averageLatencyMs: 70 } });
    expect(await upgraded.counts()).toEqual(await recount(upgraded));
  });

  it('equal a full recount after writers in two stores (as two processes) changed the same sessions and turns at once', async () => {
    schema = uniqueTestSchema();
    const [left, right] = [await open(), await open()];
    const sessions = Array.from({ length: 6 }, (_, index) => `s${index}`);
    for (const id of sessions) await left.upsertSession({ id, tenant: null, user: null, at: 100 });
    const turnIds = sessions.flatMap((session) => [0, 1, 2].map((index) => `${session}-t${index}`));
    for (const id of turnIds) await left.recordTurn(turn(id, { sessionId: id.split('-')[0] ?? '' }));
    // Each turn is linked by one store while the other gives it feedback and a judgement, and
    // its session is closed (and half of them reopened) by both, all at once.
    await Promise.all(
      turnIds.flatMap((id, index) => {
        const [linker, judge] = index % 2 === 0 ? [left, right] : [right, left];
        const session = id.split('-')[0] ?? '';
        return [
          linker.linkNextState(id, [{ role: 'user', content: 'ok' }], 500),
          judge.recordFeedback({ turnId: id, score: 1, text: null, hint: null, tenant: null, user: null, createdAt: 500 }),
          judge.recordJudgement(judgement(id)),
          linker.recordJudgement(judgement(id, { judge: 'rules' })),
          (index % 3 === 0 ? left : right).closeSession(session, 'done', 500),
          index % 4 === 0 ? linker.upsertSession({ id: session, tenant: null, user: null, at: 600 }) : Promise.resolve(),
        ];
      }),
    );
    await Promise.all(sessions.map((id, index) => (index % 2 === 0 ? right : left).closeSession(id, 'admin', 700)));
    const [counts, other] = await Promise.all([left.counts(), right.counts()]);
    expect(counts).toEqual(other);
    expect(counts).toEqual(await recount(left));
    expect(counts.judging.judged).toBe(turnIds.length);
  });

  it('fold their deltas into one row per counter once there are many, and count the same', async () => {
    schema = uniqueTestSchema();
    const store = await open();
    await store.upsertSession({ id: 's1', tenant: null, user: null, at: 100 });
    for (const id of ['a', 'b']) await store.recordTurn(turn(id));
    const before = await store.counts();
    // Writes' deltas that cancel out: +1 and −1 for one counter, 1,500 times.
    await queryTestSchema(schema, "INSERT INTO record_count_deltas (name, delta) SELECT 'turns_main', (-1) ^ step FROM generate_series(1, 3000) AS step");
    expect(await store.counts()).toEqual(before);
    const [{ deltas } = { deltas: -1 }] = await queryTestSchema<{ deltas: number }>(schema, 'SELECT count(*)::integer AS deltas FROM record_count_deltas');
    expect(deltas).toBeLessThanOrEqual(24);
    expect(await store.counts()).toEqual(await recount(store));
  });
});
