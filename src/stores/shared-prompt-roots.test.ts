import { describe, expect, it } from 'vitest';
import { createSharedPromptRoots } from './shared-prompt-roots.js';

const range = (start: number, length: number) => Array.from({ length }, (_, index) => start + index);

describe('createSharedPromptRoots', () => {
  it('finds the remembered root sharing the longest prefix, when it shares at least the minimum', () => {
    const roots = createSharedPromptRoots({ minimumSharedIds: 4 });
    roots.remember(1, [...range(0, 6), 90, 91]);
    roots.remember(2, [...range(0, 3), 80, 81, 82]);
    expect(roots.find([...range(0, 6), 70])).toEqual({ ordinal: 1, prefixLength: 6 });
    // Shares 3 ids with root 2 and 3 with root 1: below the minimum, so stored whole.
    expect(roots.find([...range(0, 3), 60])).toBeUndefined();
    expect(roots.find([50, 51, 52, 53])).toBeUndefined();
    // The prefix may cover the whole root, or the whole new prompt.
    expect(roots.find([...range(0, 6), 90, 91, 92])).toEqual({ ordinal: 1, prefixLength: 8 });
    expect(roots.find(range(0, 5))).toEqual({ ordinal: 1, prefixLength: 5 });
  });

  it('keeps the most recently used roots up to its capacity and ignores prompts below the minimum', () => {
    const roots = createSharedPromptRoots({ capacity: 2, minimumSharedIds: 3 });
    roots.remember(1, range(100, 5));
    roots.remember(2, range(200, 5));
    expect(roots.find(range(100, 4))?.ordinal).toBe(1);
    // Root 1 was used last, so root 2 is the one forgotten.
    roots.remember(3, range(300, 5));
    expect(roots.find(range(200, 4))).toBeUndefined();
    expect(roots.find(range(100, 4))?.ordinal).toBe(1);
    expect(roots.find(range(300, 4))?.ordinal).toBe(3);
    roots.remember(4, [1, 2]);
    expect(roots.size).toBe(2);
    roots.clear();
    expect(roots.size).toBe(0);
    expect(roots.find(range(100, 4))).toBeUndefined();
  });

  it('keeps its own copy of a remembered prompt', () => {
    const roots = createSharedPromptRoots({ minimumSharedIds: 3 });
    const prompt = range(0, 5);
    roots.remember(1, prompt);
    prompt.fill(7);
    expect(roots.find(range(0, 5))).toEqual({ ordinal: 1, prefixLength: 5 });
  });
});
