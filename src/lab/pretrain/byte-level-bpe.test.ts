import { describe, expect, it } from 'vitest';
import { createChatTemplate } from '../../model/chat-template.js';
import { chatmlTemplate } from '../../model/chatml-template.js';
import { createTokenizer } from '../../model/tokenizer.js';
import { parseTokenizerConfig } from '../../model/tokenizer-config.js';
import { buildBuiltinTokenizer } from './builtin-tokenizer.js';
import { byteToUnicode, preTokenize, trainByteLevelBpe } from './byte-level-bpe.js';
import { generateCorpus } from '../corpus/corpus-generator.js';
import { createSequenceEncoder } from './training-sequence.js';

describe('byteToUnicode', () => {
  it('maps the 256 bytes to distinct printable characters, ASCII letters to themselves', () => {
    const map = byteToUnicode();
    expect(new Set(map).size).toBe(256);
    expect(map['a'.charCodeAt(0)]).toBe('a');
    expect(map[' '.charCodeAt(0)]).toBe('Ġ');
    expect(map['\n'.charCodeAt(0)]).toBe('Ċ');
  });
});

describe('trainByteLevelBpe', () => {
  it('merges the most frequent pairs first and is deterministic', () => {
    const texts = ['the cat the hat the bat', 'the mat'];
    const first = trainByteLevelBpe({ texts, vocabularySize: 256 + 5 + 4 });
    const second = trainByteLevelBpe({ texts: [...texts].reverse(), vocabularySize: 256 + 5 + 4 });
    expect(first.merges).toEqual(second.merges);
    expect(first.merges[0]).toEqual(['a', 't']);
    expect(first.vocabulary.get('at')).toBe(256);
    expect(first.addedTokens.map((token) => token.id)).toEqual([260, 261, 262, 263, 264]);
  });

  it('keeps digits apart and never merges across added tokens', () => {
    expect(preTokenize('x 123<|im_end|>\nab')).toEqual(['x', 'Ġ', '1', '2', '3', 'Ċ', 'ab']);
  });
});

describe('buildBuiltinTokenizer', () => {
  const files = buildBuiltinTokenizer({ seed: 7, exampleCount: 300, vocabularySize: 768 });
  const tokenizer = createTokenizer({ tokenizerJson: files.tokenizerJson, tokenizerConfig: parseTokenizerConfig(files.tokenizerConfig) });
  const template = createChatTemplate({ source: chatmlTemplate });

  it('round-trips held-out transcripts exactly and encodes special tokens as single ids', () => {
    const examples = generateCorpus({ seed: 99, count: 40, split: 'heldout' });
    for (const example of examples) {
      const text = template.render({ messages: example.messages, addGenerationPrompt: false });
      expect(tokenizer.decode(tokenizer.encode(text, { addSpecialTokens: false }))).toBe(text);
    }
    const ids = tokenizer.encode('<|im_start|>user\nhi<|im_end|><|endoftext|>', { addSpecialTokens: false });
    expect(ids[0]).toBe(tokenizer.tokenId('<|im_start|>'));
    expect(ids).toContain(tokenizer.specialTokenIds.imEnd);
    expect(ids.at(-1)).toBe(tokenizer.specialTokenIds.endOfText);
    expect(tokenizer.specialTokenIds.eos).toBe(tokenizer.specialTokenIds.imEnd);
    expect(tokenizer.decode([...tokenizer.encode('naïve — 😀')])).toBe('naïve — 😀');
  });

  it('compresses the corpus well below one token per byte', () => {
    const example = generateCorpus({ seed: 5, count: 1, split: 'train', task: 'solve' })[0];
    const text = template.render({ messages: example?.messages ?? [], addGenerationPrompt: false });
    expect(tokenizer.encode(text, { addSpecialTokens: false }).length).toBeLessThan(text.length / 2.5);
  });

  it('encodes a training sequence as the rendered prompt plus the reply and <|im_end|>', () => {
    const encoder = createSequenceEncoder(template, tokenizer);
    const example = generateCorpus({ seed: 3, count: 1, split: 'train' })[0];
    const messages = example?.messages ?? [];
    const sequence = encoder.encode(messages);
    expect(sequence.tokenIds.slice(0, sequence.targetStart)).toEqual(encoder.encodePrompt(messages.slice(0, -1)));
    expect(sequence.tokenIds.at(-1)).toBe(tokenizer.specialTokenIds.imEnd);
    expect(tokenizer.decode(sequence.tokenIds.slice(sequence.targetStart, -1))).toBe(messages.at(-1)?.content);
  });
});
