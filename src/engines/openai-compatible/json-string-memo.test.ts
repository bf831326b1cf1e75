import { describe, expect, it, vi } from 'vitest';
import { createJsonStringMemo } from './json-string-memo.js';

const long = (seed: string) => `${seed}\n"quoted" \\ tab\t é \u2028 ${'x'.repeat(20_000)}`;

describe('createJsonStringMemo', () => {
  it('returns exactly JSON.stringify of short and long strings, lone surrogates included', () => {
    const memo = createJsonStringMemo();
    for (const text of ['', 'short "text"\n', long('a'), `${long('b')}\ud800`]) {
      expect(memo.jsonOf(text)).toBe(JSON.stringify(text));
      expect(memo.jsonOf(text)).toBe(JSON.stringify(text));
    }
  });

  it('remembers only strings past the length V8 hashes by content', () => {
    const memo = createJsonStringMemo();
    memo.jsonOf('y'.repeat(16_383));
    expect(memo.size.entries).toBe(0);
    memo.jsonOf('y'.repeat(16_384));
    expect(memo.size.entries).toBe(1);
  });

  it('finds a string equal to a remembered one but built separately', () => {
    const memo = createJsonStringMemo();
    const first = memo.jsonOf(long('same'));
    const again = memo.jsonOf(JSON.parse(JSON.stringify(long('same'))) as string);
    expect(again).toBe(first);
    expect(memo.size.entries).toBe(1);
  });

  it('stays within its budget, dropping the least recently used first', () => {
    const one = long('one');
    const cost = one.length + JSON.stringify(one).length;
    const memo = createJsonStringMemo({ budgetCharacters: cost * 2 });
    memo.jsonOf(one);
    memo.jsonOf(long('two'));
    memo.jsonOf(one);
    memo.jsonOf(long('thr'));
    expect(memo.size.entries).toBe(2);
    expect(memo.size.characters).toBeLessThanOrEqual(cost * 2);
    // 'one' was used after 'two', so 'two' went: only it has to be escaped again.
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      memo.jsonOf(one);
      memo.jsonOf(long('thr'));
      expect(stringify).not.toHaveBeenCalled();
      memo.jsonOf(long('two'));
      expect(stringify).toHaveBeenCalledTimes(1);
    } finally {
      stringify.mockRestore();
    }
  });

  it('does not remember a string larger than the whole budget', () => {
    const memo = createJsonStringMemo({ budgetCharacters: 1000 });
    expect(memo.jsonOf(long('big'))).toBe(JSON.stringify(long('big')));
    expect(memo.size).toEqual({ entries: 0, characters: 0 });
  });
});
