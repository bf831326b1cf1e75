import { readFileSync } from 'node:fs';
import { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { accelerateTokenizer } from './accelerate-tokenizer.js';

function readTokenizerJson(folder: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`./__fixtures__/${folder}/tokenizer.json`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;
}

const pool = [
  'the', ' answer', 'Hello', ' world', 'tool_call', '<tool_call>', '</tool_call>', '<|im_start|>', '<|im_end|>',
  '<|begin_of_text|>', ' ', '  ', '\n', '\n\n', '\t', '\r\n', '42', '2024', '3.14', '{"city": "Paris"}', "I'm", "they'll",
  'naïve', 'café', '你好', '世界', '😀', '🎉🎉', '👨‍👩‍👧', '—', '…', 'ÆØÅ', 'Ω', '\u00a0', 'https://x.io/a?b=1', '##', '- ',
];

function randomTexts(count: number, seed: number): string[] {
  let state = seed;
  const next = (limit: number): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % limit;
  };
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + next(40) }, () => pool[next(pool.length)]).join(''),
  );
}

function comparePair(tokenizerJson: Record<string, unknown>, byteLevelPreTokenizers: number): void {
  const plain = new LibraryTokenizer(tokenizerJson, {});
  const fast = new LibraryTokenizer(tokenizerJson, {});
  // If a library update moves these internals, the speed-up silently stops; this says so.
  const accelerated = accelerateTokenizer(fast, tokenizerJson);
  expect(accelerated.report).toEqual({ byteLevelPreTokenizers, bpe: true, pairRanks: true, directEncode: true });
  const texts = randomTexts(300, 7);
  // Twice: the second pass answers from the memos.
  for (const round of [1, 2]) {
    for (const text of texts) {
      const expected = plain.encode(text, { add_special_tokens: false }).ids;
      expect({ round, text, ids: accelerated.encodeWithoutSpecialTokens(text) }).toEqual({ round, text, ids: expected });
      expect({ round, text, ids: fast.encode(text).ids }).toEqual({ round, text, ids: plain.encode(text).ids });
    }
  }
  const joined = texts.join('');
  const expectedJoined = plain.encode(joined, { add_special_tokens: false }).ids;
  // Twice: long sections come from the section cache the second time.
  expect(accelerated.encodeWithoutSpecialTokens(joined)).toEqual(expectedJoined);
  expect(accelerated.encodeWithoutSpecialTokens(joined)).toEqual(expectedJoined);
}

describe('accelerateTokenizer', () => {
  it('encodes exactly as the library does (Qwen style: Split then ByteLevel without regex)', () => {
    comparePair(readTokenizerJson('chatml-model'), 1);
  });

  it('encodes exactly as the library does (Llama 3 style, ignore_merges and bos post-processor)', () => {
    comparePair(readTokenizerJson('llama3-model'), 1);
  });

  it('encodes exactly as the library does (GPT-2 style: ByteLevel with its own regex and prefix space)', () => {
    const json = readTokenizerJson('chatml-model');
    comparePair({
      ...json,
      normalizer: null,
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    }, 1);
  });

  it('keeps long sections exact while the section cache evicts', () => {
    const json = readTokenizerJson('chatml-model');
    const plain = new LibraryTokenizer(json, {});
    const accelerated = accelerateTokenizer(new LibraryTokenizer(json, {}), json, {}, { sectionCacheCharacters: 5000 });
    const sections = randomTexts(400, 3)
      .reduce<string[]>((long, text, index) => {
        long[index % 8] = (long[index % 8] ?? '') + text;
        return long;
      }, [])
      .map((text) => `<|im_start|>${text}<|im_end|>`);
    expect(sections.every((section) => section.length > 1024)).toBe(true);
    for (const round of [1, 2, 3]) {
      for (const section of sections) {
        expect({ round, ids: accelerated.encodeWithoutSpecialTokens(section) }).toEqual({
          round,
          ids: plain.encode(section, { add_special_tokens: false }).ids,
        });
      }
    }
  });

  it('leaves components it does not recognize alone', () => {
    const json = { ...readTokenizerJson('chatml-model'), pre_tokenizer: { type: 'Whitespace' } };
    const library = new LibraryTokenizer(json, {});
    const accelerated = accelerateTokenizer(library, json);
    expect(accelerated.report).toEqual({ byteLevelPreTokenizers: 0, bpe: true, pairRanks: true, directEncode: false });
    expect(accelerated.encodeWithoutSpecialTokens('a b')).toEqual(new LibraryTokenizer(json, {}).encode('a b').ids);
  });

  it('keeps the library path for added tokens that strip whitespace around them', () => {
    const json = readTokenizerJson('chatml-model');
    const addedTokens = json.added_tokens as Array<Record<string, unknown>>;
    const stripping = { ...json, added_tokens: addedTokens.map((token) => ({ ...token, lstrip: true, rstrip: true })) };
    const accelerated = accelerateTokenizer(new LibraryTokenizer(stripping, {}), stripping);
    expect(accelerated.report.directEncode).toBe(false);
    const text = 'a  <|im_end|>  b';
    expect(accelerated.encodeWithoutSpecialTokens(text)).toEqual(
      new LibraryTokenizer(stripping, {}).encode(text, { add_special_tokens: false }).ids,
    );
  });
});
