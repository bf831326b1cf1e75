import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import { createTokenizer, type Tokenizer } from './tokenizer.js';
import { parseTokenizerConfig } from './tokenizer-config.js';

function readFixture(folder: string, file: string): unknown {
  return JSON.parse(readFileSync(new URL(`./__fixtures__/${folder}/${file}`, import.meta.url), 'utf8'));
}

function loadFixture(folder: string): Tokenizer {
  return createTokenizer({
    tokenizerJson: readFixture(folder, 'tokenizer.json'),
    tokenizerConfig: parseTokenizerConfig(readFixture(folder, 'tokenizer_config.json')),
  });
}

const chatml = loadFixture('chatml-model');
const llama = loadFixture('llama3-model');

const roundTripTexts = [
  'Hello world! The answer is 42.',
  '  leading and trailing spaces  \n\n\ttabs\r\nCRLF',
  'emoji 😀🎉👍🏽 and a family 👨‍👩‍👧',
  'CJK 你好，世界！ and Japanese ひらがな カタカナ and Korean 한국어',
  'accents: naïve café déjà vu — “quotes” …',
  '{"name": "get_weather", "arguments": {"city": "Paris"}}',
  "contractions: I'm, you're, it's, we'll, they'd, don't",
  '',
];

describe('createTokenizer (byte-level BPE, Qwen style)', () => {
  it.each(roundTripTexts)('round-trips %j exactly', (text) => {
    const ids = chatml.encode(text, { addSpecialTokens: false });
    expect(chatml.decode(ids)).toBe(text);
  });

  it('uses the learned merges rather than one token per byte', () => {
    const text = 'Hello world';
    const ids = chatml.encode(text);
    expect(ids.length).toBeLessThan(new TextEncoder().encode(text).length);
  });

  it('encodes ChatML special tokens as single ids and keeps them on decode', () => {
    const text = '<|im_start|>user\nHi 😀<|im_end|>\n<|im_start|>assistant\n';
    const ids = chatml.encode(text, { addSpecialTokens: false });
    const imStart = chatml.tokenId('<|im_start|>');
    const imEnd = chatml.tokenId('<|im_end|>');
    expect(ids.filter((id) => id === imStart)).toHaveLength(2);
    expect(ids.filter((id) => id === imEnd)).toHaveLength(1);
    expect(chatml.decode(ids)).toBe(text);
    expect(chatml.decode(ids, { skipSpecialTokens: true })).toBe('user\nHi 😀\nassistant\n');
  });

  it('keeps non-special added tokens such as <tool_call> when skipping special tokens', () => {
    const text = '<tool_call>\n{"name": "f"}\n</tool_call><|im_end|>';
    const ids = chatml.encode(text, { addSpecialTokens: false });
    expect(ids[0]).toBe(chatml.tokenId('<tool_call>'));
    expect(chatml.decode(ids, { skipSpecialTokens: true })).toBe('<tool_call>\n{"name": "f"}\n</tool_call>');
    expect(chatml.isSpecialToken(ids[0] ?? -1)).toBe(false);
    expect(chatml.isSpecialToken(chatml.tokenId('<|im_end|>') ?? -1)).toBe(true);
  });

  it('reports special token ids from tokenizer_config and the vocabulary', () => {
    const imEnd = chatml.tokenId('<|im_end|>');
    const endOfText = chatml.tokenId('<|endoftext|>');
    expect(imEnd).toBeTypeOf('number');
    expect(chatml.specialTokenIds).toEqual({
      bos: null,
      eos: imEnd,
      pad: endOfText,
      imEnd,
      endOfText,
      endOfTurn: null,
    });
    expect(chatml.eosToken).toBe('<|im_end|>');
    expect(chatml.bosToken).toBeNull();
  });

  it('counts the vocabulary up to the highest added token', () => {
    const highest = chatml.tokenId('</tool_call>') ?? -1;
    expect(chatml.vocabularySize).toBe(highest + 1);
  });

  it('does not add special tokens for Qwen even when asked (its post-processor adds none)', () => {
    expect(chatml.encode('hi', { addSpecialTokens: true })).toEqual(chatml.encode('hi', { addSpecialTokens: false }));
  });

  it('gives the text of single tokens, including half characters and specials', () => {
    const [first] = chatml.encode('Hello', { addSpecialTokens: false });
    expect(chatml.tokenText(first ?? -1)).toBe('Hello');
    expect(chatml.tokenText(chatml.tokenId('<|im_end|>') ?? -1)).toBe('<|im_end|>');
    const halfEmoji = chatml.tokenId('ðŁ');
    expect(halfEmoji).toBeTypeOf('number');
    expect(chatml.tokenText(halfEmoji ?? -1)).toBe('\uFFFD');
  });

  it('decodes ids outside the vocabulary to nothing', () => {
    const ids = chatml.encode('ok', { addSpecialTokens: false });
    expect(chatml.decode([...ids, chatml.vocabularySize + 5, -1])).toBe('ok');
    expect(chatml.tokenText(chatml.vocabularySize)).toBe('');
    expect(chatml.decode([])).toBe('');
  });

  it('never cleans up tokenization spaces, so decoding is exact', () => {
    const text = "Hello , world . Isn 't it ?";
    expect(chatml.decode(chatml.encode(text))).toBe(text);
  });
});

describe('createTokenizer (Llama 3 style)', () => {
  it('adds <|begin_of_text|> through the post-processor only when asked', () => {
    const bos = llama.specialTokenIds.bos;
    expect(bos).toBe(llama.tokenId('<|begin_of_text|>'));
    const withSpecial = llama.encode('Hello world');
    const without = llama.encode('Hello world', { addSpecialTokens: false });
    expect(withSpecial).toEqual([bos, ...without]);
  });

  it.each(roundTripTexts)('round-trips %j exactly', (text) => {
    expect(llama.decode(llama.encode(text, { addSpecialTokens: false }))).toBe(text);
  });

  it('knows its end-of-turn token and keeps clean-up off despite the config asking for it', () => {
    expect(llama.specialTokenIds.eos).toBe(llama.tokenId('<|eot_id|>'));
    expect(llama.specialTokenIds.endOfTurn).toBe(llama.tokenId('<|eot_id|>'));
    expect(llama.specialTokenIds.imEnd).toBeNull();
    const text = 'Yes , it is .';
    expect(llama.decode(llama.encode(text, { addSpecialTokens: false }))).toBe(text);
  });

  it('splits digits in groups of three before merging (Qwen: one by one)', () => {
    const piecesOf = (tokenizer: Tokenizer): string[] =>
      tokenizer.encode('4221421', { addSpecialTokens: false }).map((id) => tokenizer.tokenText(id));
    // '422' '142' '1', then the learned merge '42' applies inside each group only.
    expect(piecesOf(llama)).toEqual(['42', '2', '1', '42', '1']);
    expect(piecesOf(chatml)).toEqual(['4', '2', '2', '1', '4', '2', '1']);
  });
});

describe('tokenizer file validation', () => {
  it('rejects a tokenizer.json without a model', () => {
    expect(() =>
      createTokenizer({ tokenizerJson: { added_tokens: [] }, tokenizerConfig: parseTokenizerConfig({}) }),
    ).toThrowError(ClawrlError);
    try {
      createTokenizer({ tokenizerJson: { added_tokens: [] }, tokenizerConfig: parseTokenizerConfig({}) });
    } catch (error) {
      expect(ClawrlError.isInstance(error) && error.param).toBe('model');
    }
  });

  it('rejects a tokenizer_config.json with a malformed chat_template and names it', () => {
    try {
      parseTokenizerConfig({ chat_template: [{ name: 'default' }] });
      expect.unreachable();
    } catch (error) {
      expect(ClawrlError.isInstance(error) && error.code).toBe('configuration_error');
      expect(ClawrlError.isInstance(error) && error.param).toBe('chat_template');
    }
  });

  it('normalizes AddedToken objects and picks named chat templates', () => {
    const config = parseTokenizerConfig({
      bos_token: { __type: 'AddedToken', content: '<s>', lstrip: false },
      eos_token: '</s>',
      chat_template: [
        { name: 'default', template: 'D' },
        { name: 'tool_use', template: 'T' },
      ],
    });
    expect(config.bosToken).toBe('<s>');
    expect(config.eosToken).toBe('</s>');
    expect(config.chatTemplate).toBe('D');
    expect(config.namedChatTemplates).toEqual({ tool_use: 'T' });
  });
});
