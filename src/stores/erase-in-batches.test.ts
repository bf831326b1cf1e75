import { describe, expect, it } from 'vitest';
import type { ErasureResult, ErasureTarget } from '../spec/record-erasure.js';
import { eraseInBatches } from './erase-in-batches.js';

function batchOf(turns: string[], versions: number[]): ErasureResult {
  const erased = { sessions: 1, turns: turns.length, messages: 0, nextStates: 0, judgements: 0, feedback: 0, hints: 0, samples: turns.length, queued: 0, memoryEntries: 0 };
  return {
    receipt: { target: { kind: 'before', before: 10 }, erasedAt: 20, erased, trainedOnErased: versions, affectedVersions: versions, storageWiped: false },
    sessionIds: ['s'],
    turnIds: turns,
    sampleIds: turns.map((turn) => `sample-${turn}`),
  };
}

describe('eraseInBatches', () => {
  it('erases a period batch after batch until one comes back short, and adds their receipts up', async () => {
    const batches = [batchOf(['a', 'b'], [2]), batchOf(['c', 'd'], [1, 2]), batchOf(['e'], [3])];
    let calls = 0;
    const result = await eraseInBatches({ kind: 'before', before: 10 }, 2, async () => batches[calls++] as ErasureResult);
    expect(calls).toBe(3);
    expect(result.turnIds).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(result.sessionIds).toEqual(['s']);
    expect(result.receipt.erased).toMatchObject({ turns: 5, samples: 5, sessions: 3 });
    expect(result.receipt.affectedVersions).toEqual([1, 2, 3]);
  });

  it('erases a session or a tenant in one go', async () => {
    for (const target of [{ kind: 'session', sessionId: 's' }, { kind: 'tenant', tenant: 't' }] satisfies ErasureTarget[]) {
      let calls = 0;
      await eraseInBatches(target, 2, async () => {
        calls += 1;
        return batchOf(['a', 'b'], []);
      });
      expect(calls).toBe(1);
    }
  });
});
