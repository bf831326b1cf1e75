import { describe, expect, it } from 'vitest';
import { splitByCost } from './gradient-worker-pool.js';

describe('splitByCost', () => {
  it('balances token counts across shares and keeps every sequence once', () => {
    const batch = [300, 120, 450, 200, 180, 160, 340, 150].map((length, index) => ({ tokenIds: new Array<number>(length).fill(index), targetStart: 1 }));
    const shares = splitByCost(batch, 2);
    const costs = shares.map((share) => share.reduce((sum, sequence) => sum + sequence.tokenIds.length, 0));
    expect(Math.abs((costs[0] ?? 0) - (costs[1] ?? 0))).toBeLessThanOrEqual(120);
    expect(shares.flat().map((sequence) => sequence.tokenIds[0]).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
