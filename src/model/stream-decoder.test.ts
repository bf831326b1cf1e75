import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createStreamDecoder } from './stream-decoder.js';
import { createTokenizer, type Tokenizer } from './tokenizer.js';
import { parseTokenizerConfig } from './tokenizer-config.js';

function readFixture(file: string): unknown {
  return JSON.parse(readFileSync(new URL(`./__fixtures__/chatml-model/${file}`, import.meta.url), 'utf8'));
}

const tokenizer = createTokenizer({
  tokenizerJson: readFixture('tokenizer.json'),
  tokenizerConfig: parseTokenizerConfig(readFixture('tokenizer_config.json')),
});

/** GPT-2's byte-to-character table, to address single-byte tokens by byte value. */
function byteTokenId(byte: number): number {
  const printable = (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || (byte >= 174 && byte <= 255);
  let character: string;
  if (printable) {
    character = String.fromCodePoint(byte);
  } else {
    let offset = 0;
    for (let other = 0; other < byte; other++) {
      const otherPrintable = (other >= 33 && other <= 126) || (other >= 161 && other <= 172) || (other >= 174 && other <= 255);
      if (!otherPrintable) offset++;
    }
    character = String.fromCodePoint(256 + offset);
  }
  const id = tokenizer.tokenId(character);
  if (id === undefined) throw new Error(`no token for byte ${byte}`);
  return id;
}

function byteTokens(text: string): number[] {
  return [...new TextEncoder().encode(text)].map(byteTokenId);
}

function streamAll(ids: number[], source: Tokenizer = tokenizer): { pieces: string[]; text: string } {
  const decoder = createStreamDecoder(source);
  const pieces = ids.map((id) => decoder.push(id));
  pieces.push(decoder.finish());
  return { pieces, text: pieces.join('') };
}

describe('createStreamDecoder', () => {
  it('holds an emoji split across single-byte tokens until its last byte', () => {
    const ids = [...byteTokens('a'), ...byteTokens('🎉'), ...byteTokens('b')];
    expect(ids).toHaveLength(6);
    expect(streamAll(ids).pieces).toEqual(['a', '', '', '', '🎉', 'b', '']);
  });

  it('holds a token that ends in half a character (the fixture merges the first two emoji bytes)', () => {
    const ids = tokenizer.encode(' 😀!', { addSpecialTokens: false });
    expect(ids.length).toBeGreaterThan(1);
    const { pieces, text } = streamAll(ids);
    expect(text).toBe(' 😀!');
    expect(pieces.every((piece) => !piece.includes('\uFFFD'))).toBe(true);
  });

  it('streams CJK, accents and ASCII so that the pieces join to the whole decode', () => {
    const text = 'Hello 你好，世界！ naïve café 👨‍👩‍👧 done.';
    const ids = tokenizer.encode(text, { addSpecialTokens: false });
    const { pieces, text: streamed } = streamAll(ids);
    expect(streamed).toBe(text);
    expect(pieces.some((piece) => piece === '')).toBe(true);
    expect(pieces.every((piece) => !piece.includes('\uFFFD'))).toBe(true);
  });

  it('skips special tokens by default and keeps them when asked', () => {
    const ids = tokenizer.encode('Hi<|im_end|>', { addSpecialTokens: false });
    expect(streamAll(ids).text).toBe('Hi');
    const decoder = createStreamDecoder(tokenizer, { skipSpecialTokens: false });
    expect(ids.map((id) => decoder.push(id)).join('') + decoder.finish()).toBe('Hi<|im_end|>');
  });

  it('flushes an incomplete character at finish as U+FFFD, like a full decode', () => {
    const ids = [...byteTokens('x'), ...byteTokens('🎉').slice(0, 2)];
    const { pieces } = streamAll(ids);
    expect(pieces).toEqual(['x', '', '', '\uFFFD']);
    expect(tokenizer.decode(ids)).toBe('x\uFFFD');
  });

  it('agrees with a full decode on random token sequences, invalid UTF-8 included', () => {
    let state = 12345;
    const random = (limit: number): number => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % limit;
    };
    for (let round = 0; round < 200; round++) {
      const ids = Array.from({ length: 1 + random(30) }, () => random(tokenizer.vocabularySize));
      expect(streamAll(ids).text).toBe(tokenizer.decode(ids, { skipSpecialTokens: true }));
    }
  });

  it('returns nothing when nothing was pushed', () => {
    expect(createStreamDecoder(tokenizer).finish()).toBe('');
  });
});
