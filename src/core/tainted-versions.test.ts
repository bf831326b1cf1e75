import { describe, expect, it } from 'vitest';
import { taintedVersionsOf, untaintedFallbackOf } from './tainted-versions.js';

// 0 ─ 1 ─ 2 ─ 4
//      └─ 3
const versions = [
  { version: 0, parent: null },
  { version: 1, parent: 0 },
  { version: 2, parent: 1 },
  { version: 3, parent: 1 },
  { version: 4, parent: 2 },
];

describe('taintedVersionsOf', () => {
  it('taints what trained on erased samples and every descendant, nothing else', () => {
    expect(taintedVersionsOf(versions, [2])).toEqual([2, 4]);
    expect(taintedVersionsOf(versions, [1])).toEqual([1, 2, 3, 4]);
    expect(taintedVersionsOf(versions, [])).toEqual([]);
  });
});

describe('untaintedFallbackOf', () => {
  it('falls back to the served version\'s newest untainted ancestor', () => {
    expect(untaintedFallbackOf(versions, new Set([2, 4]), 4)).toBe(1);
    expect(untaintedFallbackOf(versions, new Set([2, 4]), 3)).toBe(3);
    expect(untaintedFallbackOf(versions, new Set([1, 2, 3, 4]), 4)).toBe(0);
  });
});
