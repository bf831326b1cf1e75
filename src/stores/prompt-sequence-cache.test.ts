import { describe, expect, it } from 'vitest';
import { createPromptSequenceCache } from './prompt-sequence-cache.js';

describe('createPromptSequenceCache', () => {
  it('recalls prompt followed by response, only for the ordinal it remembered', () => {
    const cache = createPromptSequenceCache();
    cache.remember('s', 'main', 7, [1, 2, 3], [4, 5]);
    expect(Array.from(cache.recall('s', 'main', 7) ?? [])).toEqual([1, 2, 3, 4, 5]);
    expect(cache.recall('s', 'main', 6)).toBeUndefined();
    expect(cache.recall('s', 'side', 7)).toBeUndefined();
    cache.remember('s', 'main', 8, [1, 2, 3, 4, 5, 6], [7]);
    expect(cache.recall('s', 'main', 7)).toBeUndefined();
    expect(cache.size).toEqual({ entries: 1, ids: 7 });
  });

  it('keeps to its budget of ids by forgetting the least recently used sessions', () => {
    const cache = createPromptSequenceCache(10);
    cache.remember('a', 'main', 1, [1, 2, 3], [4]);
    cache.remember('b', 'main', 2, [1, 2, 3], [4]);
    // Using `a` makes `b` the least recently used.
    expect(cache.recall('a', 'main', 1)).toBeDefined();
    cache.remember('c', 'main', 3, [1, 2, 3], [4]);
    expect(cache.recall('b', 'main', 2)).toBeUndefined();
    expect(cache.recall('a', 'main', 1)).toBeDefined();
    expect(cache.recall('c', 'main', 3)).toBeDefined();
    expect(cache.size).toEqual({ entries: 2, ids: 8 });
    // A sequence larger than the whole budget is not kept, and evicts nothing.
    cache.remember('d', 'main', 4, Array.from({ length: 11 }, (_, index) => index), []);
    expect(cache.recall('d', 'main', 4)).toBeUndefined();
    expect(cache.size.entries).toBe(2);
    cache.clear();
    expect(cache.size).toEqual({ entries: 0, ids: 0 });
  });
});
