import { describe, expect, it } from 'vitest';
import { createStringInterner } from './string-interner.js';

// JavaScript cannot tell two equal strings apart, so these tests watch what is remembered.
const long = (seed: string) => `${seed} ${'x'.repeat(20_000)}`;
/** A string equal to `text` but a separate copy, as a fresh `JSON.parse` makes. */
const copyOf = (text: string) => JSON.parse(JSON.stringify(text)) as string;

describe('createStringInterner', () => {
  it('remembers a long string once however often it comes back, and never a short one', () => {
    const interner = createStringInterner();
    const first = long('a');
    expect(interner.intern(first)).toBe(first);
    expect(interner.intern(copyOf(first))).toBe(first);
    expect(interner.size).toEqual({ entries: 1, characters: first.length });
    const short = 'y'.repeat(16_383);
    expect(interner.intern(short)).toBe(short);
    expect(interner.size.entries).toBe(1);
  });

  it('stays within its budget, dropping the least recently used strings first', () => {
    // The lengths differ, so the characters held tell which strings are remembered.
    const [one, two, three, four] = ['1', '22', '333', '4444'].map(long) as [string, string, string, string];
    const interner = createStringInterner({ budgetCharacters: one.length + two.length + three.length + 3 });
    for (const text of [one, two, three]) interner.intern(text);
    interner.intern(copyOf(one));
    interner.intern(four);
    // Over budget: the least recently used ('two') goes, and only it.
    expect(interner.size).toEqual({ entries: 3, characters: one.length + three.length + four.length });
    interner.intern(copyOf(two));
    expect(interner.size).toEqual({ entries: 3, characters: one.length + two.length + four.length });
  });

  it('does not remember a string larger than the whole budget', () => {
    const interner = createStringInterner({ budgetCharacters: 1000 });
    interner.intern(long('big'));
    expect(interner.size).toEqual({ entries: 0, characters: 0 });
  });
});
