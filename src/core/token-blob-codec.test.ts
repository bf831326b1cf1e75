import { describe, expect, it } from 'vitest';
import {
  commonPrefixLength,
  decodeFloat64Blob,
  decodeInt32Blob,
  encodeFloat64Blob,
  encodeInt32Blob,
  reconstructPromptTokenIds,
} from './token-blob-codec.js';

describe('token blob codec', () => {
  it('writes Int32 ids little-endian and reads them back', () => {
    const blob = encodeInt32Blob([1, -2, 2_147_483_647], 'ids');
    expect([...blob]).toEqual([1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    expect(decodeInt32Blob(blob)).toEqual([1, -2, 2_147_483_647]);
  });

  it('decodes from a view that does not start at its buffer origin', () => {
    const backing = Buffer.concat([Buffer.from([9, 9, 9]), encodeInt32Blob([7, 8], 'ids')]);
    expect(decodeInt32Blob(backing.subarray(3))).toEqual([7, 8]);
  });

  it('rejects ids that do not fit in 32 bits', () => {
    expect(() => encodeInt32Blob([1.5], 'ids')).toThrow(/ids\[0\]/);
    expect(() => encodeInt32Blob([0, 2 ** 31], 'ids')).toThrow(/ids\[1\]/);
    expect(() => encodeInt32Blob([Number.NaN], 'ids')).toThrow(/ids\[0\]/);
  });

  it('round-trips every float64 bit-for-bit', () => {
    const values = [0.1 + 0.2, -0, -Infinity, Number.MIN_VALUE, -Number.MAX_VALUE, Number.NaN];
    const decoded = decodeFloat64Blob(encodeFloat64Blob(values, 'logprobs'));
    expect(decoded.map((value, position) => Object.is(value, values[position]))).toEqual(values.map(() => true));
  });

  it('rejects blobs whose length does not match their element size', () => {
    expect(() => decodeInt32Blob(Buffer.alloc(6))).toThrow(/multiple of 4/);
    expect(() => decodeFloat64Blob(Buffer.alloc(12))).toThrow(/multiple of 8/);
  });

  it('measures common prefixes', () => {
    expect(commonPrefixLength([1, 2, 3], [1, 2, 4])).toBe(2);
    expect(commonPrefixLength([1, 2], [1, 2, 3])).toBe(2);
    expect(commonPrefixLength([], [1])).toBe(0);
  });

  it('rebuilds a prompt from a chain whose prefixes reach into the base response', () => {
    const chain = [
      { prefixLength: 0, suffix: [1, 2], responseTokenIds: [3, 4] },
      { prefixLength: 3, suffix: [5], responseTokenIds: [6] },
      { prefixLength: 1, suffix: [7, 8], responseTokenIds: [] },
    ];
    expect(reconstructPromptTokenIds(chain.slice(0, 1))).toEqual([1, 2]);
    expect(reconstructPromptTokenIds(chain.slice(0, 2))).toEqual([1, 2, 3, 5]);
    expect(reconstructPromptTokenIds(chain)).toEqual([1, 7, 8]);
    expect(reconstructPromptTokenIds([])).toEqual([]);
  });

  it('reports a corrupt chain instead of inventing ids', () => {
    expect(() => reconstructPromptTokenIds([{ prefixLength: 1, suffix: [], responseTokenIds: [] }])).toThrow(
      /missing base/,
    );
    expect(() =>
      reconstructPromptTokenIds([
        { prefixLength: 0, suffix: [1], responseTokenIds: [2] },
        { prefixLength: 3, suffix: [], responseTokenIds: [] },
      ]),
    ).toThrow(/exceeds/);
  });
});
