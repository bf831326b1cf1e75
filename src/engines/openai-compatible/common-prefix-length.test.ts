import { describe, expect, it } from 'vitest';
import { commonPrefixLength } from './common-prefix-length.js';

function byCharacters(first: string, second: string): number {
  let index = 0;
  while (index < first.length && index < second.length && first[index] === second[index]) index += 1;
  return index;
}

describe('commonPrefixLength', () => {
  it('counts the shared leading characters, whatever the lengths and where they differ', () => {
    const base = 'x'.repeat(70_000);
    const cases: [string, string][] = [
      ['', ''],
      ['', 'a'],
      ['abc', 'abc'],
      ['abc', 'abd'],
      ['abc', 'abcdef'],
      ['b', 'a'],
      [base, `${base}y`],
      [`${base.slice(0, 12_345)}a${base}`, `${base.slice(0, 12_345)}b${base}`],
      [`${base}a`, `${base}b`],
      [`a${base}`, `b${base}`],
      ['é😀x', 'é😀y'],
    ];
    for (const [first, second] of cases) {
      expect(commonPrefixLength(first, second)).toBe(byCharacters(first, second));
      expect(commonPrefixLength(second, first)).toBe(byCharacters(first, second));
    }
  });
});
