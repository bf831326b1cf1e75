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
    const length = long('one').length;
    const interner = createStringInterner({ budgetCharacters: length * 3 });
    for (const seed of ['one', 'two', 'thr']) interner.intern(long(seed));
    interner.intern(copyOf(long('one')));
    interner.intern(long('fou'));
    // Over budget: dropped down to three quarters of it, oldest first ('two', then 'thr').
    expect(interner.size).toEqual({ entries: 2, characters: length * 2 });
    interner.intern(copyOf(long('one')));
    interner.intern(copyOf(long('fou')));
    expect(interner.size.entries).toBe(2);
    interner.intern(copyOf(long('two')));
    expect(interner.size.entries).toBe(3);
  });

  it('does not remember a string larger than the whole budget', () => {
    const interner = createStringInterner({ budgetCharacters: 1000 });
    interner.intern(long('big'));
    expect(interner.size).toEqual({ entries: 0, characters: 0 });
  });
});
