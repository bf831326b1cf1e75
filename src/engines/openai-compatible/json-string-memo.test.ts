import { describe, expect, it, vi } from 'vitest';
import { createJsonStringMemo } from './json-string-memo.js';

const long = (seed: string) => `${seed}\n"quoted" \\ tab\t é \u2028 ${'x'.repeat(20_000)}`;

describe('createJsonStringMemo', () => {
  it('returns exactly the UTF-8 bytes of JSON.stringify of long strings, lone surrogates included, and nothing for short ones', () => {
    const memo = createJsonStringMemo();
    for (const text of ['', 'short "text"\n', 'y'.repeat(16_383)]) expect(memo.jsonBytesOf(text)).toBeUndefined();
    for (const text of [long('a'), `${long('b')}\ud800`]) {
      expect(memo.jsonBytesOf(text)).toEqual(Buffer.from(JSON.stringify(text)));
      expect(memo.jsonBytesOf(text)).toEqual(Buffer.from(JSON.stringify(text)));
    }
  });

  it('remembers only strings past the length V8 hashes by content', () => {
    const memo = createJsonStringMemo();
    memo.jsonBytesOf('y'.repeat(16_383));
    expect(memo.size.entries).toBe(0);
    memo.jsonBytesOf('y'.repeat(16_384));
    expect(memo.size.entries).toBe(1);
  });

  it('finds a string equal to a remembered one but built separately', () => {
    const memo = createJsonStringMemo();
    const first = memo.jsonBytesOf(long('same'));
    const again = memo.jsonBytesOf(JSON.parse(JSON.stringify(long('same'))) as string);
    expect(again).toBe(first);
    expect(memo.size.entries).toBe(1);
  });

  it('stays within its budget, dropping the least recently used first', () => {
    const one = long('one');
    const cost = one.length + Buffer.byteLength(JSON.stringify(one));
    const memo = createJsonStringMemo({ budgetCharacters: cost * 2 });
    memo.jsonBytesOf(one);
    memo.jsonBytesOf(long('two'));
    memo.jsonBytesOf(one);
    memo.jsonBytesOf(long('thr'));
    expect(memo.size.entries).toBe(2);
    expect(memo.size.characters).toBeLessThanOrEqual(cost * 2);
    // 'one' was used after 'two', so 'two' went: only it has to be escaped again.
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      memo.jsonBytesOf(one);
      memo.jsonBytesOf(long('thr'));
      expect(stringify).not.toHaveBeenCalled();
      memo.jsonBytesOf(long('two'));
      expect(stringify).toHaveBeenCalledTimes(1);
    } finally {
      stringify.mockRestore();
    }
  });

  it('does not remember a string larger than the whole budget', () => {
    const memo = createJsonStringMemo({ budgetCharacters: 1000 });
    expect(memo.jsonBytesOf(long('big'))).toEqual(Buffer.from(JSON.stringify(long('big'))));
    expect(memo.size).toEqual({ entries: 0, characters: 0 });
  });
});
