import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { judgement, newTurn, sample } from '../testing/record-fixtures.js';
import { createSqliteRecordStore } from './create-sqlite-record-store.js';
import { erasureBatchTurns } from './sqlite-erasure.js';

const marker = 'quokka-residue-5521';

/** Which files of `directory` hold `text`'s bytes anywhere, the WAL included. */
function filesHolding(directory: string, text: string): string[] {
  const needle = Buffer.from(text);
  return readdirSync(directory).filter((name) => readFileSync(join(directory, name)).includes(needle));
}

describe('SQLite erasure on a file', () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'clawrl-erasure-'));
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('leaves no byte of an erased session in the database file or its WAL, with the checkpointer and the same text elsewhere in other rows before', async () => {
    const store = createSqliteRecordStore({ path: join(directory, 'records.db'), checkpointInBackground: true, neverWait: true });
    await store.upsertSession({ id: 'kept', tenant: null, user: null, at: 1 });
    await store.recordTurn(newTurn('k1', { sessionId: 'kept', messages: [{ role: 'user', content: 'nothing to see' }] }));
    await store.upsertSession({ id: 'gone', tenant: null, user: null, at: 1 });
    await store.recordTurn(newTurn('g1', { sessionId: 'gone', messages: [{ role: 'user', content: `call me ${marker}` }], response: { role: 'assistant', content: `hi ${marker}` } }));
    await store.linkNextState('g1', [{ role: 'user', content: `again ${marker}` }], 2);
    await store.recordJudgement(judgement('g1', { hint: `hint ${marker}` }));
    await store.recordFeedback({ turnId: 'g1', score: 1, text: `thanks ${marker}`, hint: `hint ${marker}`, tenant: null, user: null, createdAt: 3 });
    await store.recordSample(sample('s-g1', 'g1', { hint: `hint ${marker}` }));
    // Rows rewritten after their first write: the older copies must not survive either.
    await store.updateSampleStatus({ ids: ['s-g1'], status: 'dropped', reason: 'test', at: 4 });
    // Let the background checkpointer copy the rows into the database file first.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(filesHolding(directory, marker).length).toBeGreaterThan(0);

    const { receipt } = await store.erase({ kind: 'session', sessionId: 'gone' }, 10);
    expect(receipt.storageWiped).toBe(true);
    expect(filesHolding(directory, marker)).toEqual([]);
    expect((await store.getTurn('k1'))?.messages).toEqual([{ role: 'user', content: 'nothing to see' }]);
    await store.close();
    expect(filesHolding(directory, marker)).toEqual([]);
  });
});

describe('SQLite erasure of a period', () => {
  it('goes in batches of turns and sums them into one receipt, keeping what is newer', async () => {
    const store = createSqliteRecordStore({ path: ':memory:' });
    const old = erasureBatchTurns * 2 + 7;
    for (const session of ['a', 'b', 'c']) await store.upsertSession({ id: session, tenant: null, user: null, at: 1 });
    for (let index = 0; index < old; index += 1) {
      const sessionId = ['a', 'b'][index % 2] as string;
      await store.recordTurn(newTurn(`old-${index}`, { sessionId, timings: { startedAt: 1_000 + index, firstTokenAt: null, endedAt: 1_001 + index } }));
    }
    await store.recordTurn(newTurn('new-0', { sessionId: 'c', timings: { startedAt: 900_000, firstTokenAt: null, endedAt: 900_001 } }));
    await store.recordTurn(newTurn('new-1', { sessionId: 'b', timings: { startedAt: 900_000, firstTokenAt: null, endedAt: 900_001 } }));

    const { receipt, turnIds } = await store.erase({ kind: 'before', before: 500_000 }, 1_000_000);
    expect(receipt.erased.turns).toBe(old);
    expect(new Set(turnIds).size).toBe(old);
    expect(await store.getTurn('old-0')).toBeNull();
    expect(await store.getTurn(`old-${old - 1}`)).toBeNull();
    expect(await store.getTurn('new-0')).not.toBeNull();
    expect(await store.getTurn('new-1')).not.toBeNull();
    await store.close();
  });
});
