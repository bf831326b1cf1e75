/**
 * Trains the built-in model's tokenizer: a byte-level BPE in Hugging Face `tokenizer.json` form.
 *
 * Pre-tokenization is Qwen 2's (a Split regex with single digits, then ByteLevel without its own
 * regex), so every number is a sequence of digit tokens: the model then copies and computes
 * numbers digit by digit instead of memorizing one token per number. Merges are learned greedily
 * from pair counts over the distinct pre-tokenized words of the training text; ties break on the
 * pair text, so the same text always gives the same tokenizer.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import { chatmlTemplate } from '../../model/chatml-template.js';

/** Special tokens first (ids right after the merges), then the tool-call markers the template writes. */
export const builtinAddedTokens: readonly { content: string; special: boolean }[] = [
  { content: '<|endoftext|>', special: true },
  { content: '<|im_start|>', special: true },
  { content: '<|im_end|>', special: true },
  { content: '<tool_call>', special: false },
  { content: '</tool_call>', special: false },
];

/** Qwen 2's split pattern, as `tokenizer.json` stores it (Rust regex syntax). */
const splitPatternSource = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/**
 * The same pattern for JavaScript, which lacks inline `(?i:)` groups in Node 20; contractions are
 * spelled out in both cases instead, so training sees exactly the pieces the encoder produces.
 */
const splitPattern =
  /'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

/** GPT-2's byte → printable character map: printable Latin-1 bytes map to themselves. */
export function byteToUnicode(): string[] {
  const printable: number[] = [];
  for (let byte = 0x21; byte <= 0x7e; byte += 1) printable.push(byte);
  for (let byte = 0xa1; byte <= 0xac; byte += 1) printable.push(byte);
  for (let byte = 0xae; byte <= 0xff; byte += 1) printable.push(byte);
  const map: string[] = new Array<string>(256);
  for (const byte of printable) map[byte] = String.fromCodePoint(byte);
  let next = 0;
  for (let byte = 0; byte < 256; byte += 1) {
    if (map[byte] === undefined) {
      map[byte] = String.fromCodePoint(256 + next);
      next += 1;
    }
  }
  return map;
}

const byteMap = byteToUnicode();
const utf8 = new TextEncoder();

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Splits text into byte-level words (added tokens removed, as the encoder never runs BPE on them). */
export function preTokenize(text: string): string[] {
  const specials = new RegExp(builtinAddedTokens.map((token) => escapeRegex(token.content)).join('|'), 'g');
  const words: string[] = [];
  for (const segment of text.split(specials)) {
    for (const match of segment.matchAll(splitPattern)) {
      let word = '';
      for (const byte of utf8.encode(match[0])) word += byteMap[byte];
      words.push(word);
    }
  }
  return words;
}

export interface TrainByteLevelBpeOptions {
  /** Training text; order does not matter, only word counts. */
  texts: Iterable<string>;
  /** Total vocabulary including the 256 bytes and the added tokens. */
  vocabularySize: number;
  /** Pairs seen fewer times than this are never merged (default 2). */
  minimumPairCount?: number;
}

export interface ByteLevelBpe {
  /** Token → id: bytes 0–255, then one token per merge. */
  vocabulary: Map<string, number>;
  merges: [string, string][];
  /** Added tokens with their ids (after the BPE vocabulary). */
  addedTokens: { id: number; content: string; special: boolean }[];
}

interface WordEntry {
  symbols: string[];
  count: number;
}

function countPairs(words: readonly WordEntry[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of words) {
    for (let index = 0; index + 1 < word.symbols.length; index += 1) {
      // U+0000 never appears in byte-level symbols, so it separates the pair unambiguously.
      const key = `${word.symbols[index]}\u0000${word.symbols[index + 1]}`;
      counts.set(key, (counts.get(key) ?? 0) + word.count);
    }
  }
  return counts;
}

function mergeWord(symbols: string[], left: string, right: string): string[] {
  const merged: string[] = [];
  for (let index = 0; index < symbols.length; index += 1) {
    if (index + 1 < symbols.length && symbols[index] === left && symbols[index + 1] === right) {
      merged.push(left + right);
      index += 1;
    } else merged.push(symbols[index] ?? '');
  }
  return merged;
}

export function trainByteLevelBpe(options: TrainByteLevelBpeOptions): ByteLevelBpe {
  const mergeBudget = options.vocabularySize - 256 - builtinAddedTokens.length;
  if (mergeBudget < 0) {
    throw new ClawrlError('invalid_request', `vocabulary size ${options.vocabularySize} is below the 256 bytes plus added tokens`);
  }
  const minimumPairCount = options.minimumPairCount ?? 2;
  const wordCounts = new Map<string, number>();
  for (const text of options.texts) {
    for (const word of preTokenize(text)) wordCounts.set(word, (wordCounts.get(word) ?? 0) + 1);
  }
  const words: WordEntry[] = [...wordCounts.entries()]
    .sort(([first], [second]) => (first < second ? -1 : first > second ? 1 : 0))
    .map(([word, count]) => ({ symbols: [...word], count }));

  const vocabulary = new Map<string, number>();
  for (let byte = 0; byte < 256; byte += 1) vocabulary.set(byteMap[byte] ?? '', byte);
  const merges: [string, string][] = [];
  // Only words holding the chosen pair change, so counts are updated for those words alone.
  const pairCounts = countPairs(words);
  while (merges.length < mergeBudget) {
    let bestKey: string | null = null;
    let bestCount = 0;
    for (const [key, count] of pairCounts) {
      if (count > bestCount || (count === bestCount && bestKey !== null && key < bestKey)) {
        bestKey = key;
        bestCount = count;
      }
    }
    if (bestKey === null || bestCount < minimumPairCount) break;
    const [left = '', right = ''] = bestKey.split('\u0000');
    merges.push([left, right]);
    vocabulary.set(left + right, vocabulary.size);
    for (const word of words) {
      if (!hasPair(word.symbols, left, right)) continue;
      adjustPairCounts(pairCounts, word, -1);
      word.symbols = mergeWord(word.symbols, left, right);
      adjustPairCounts(pairCounts, word, 1);
    }
  }
  const addedTokens = builtinAddedTokens.map((token, index) => ({ id: vocabulary.size + index, ...token }));
  return { vocabulary, merges, addedTokens };
}

function hasPair(symbols: readonly string[], left: string, right: string): boolean {
  for (let index = 0; index + 1 < symbols.length; index += 1) {
    if (symbols[index] === left && symbols[index + 1] === right) return true;
  }
  return false;
}

function adjustPairCounts(counts: Map<string, number>, word: WordEntry, sign: 1 | -1): void {
  for (let index = 0; index + 1 < word.symbols.length; index += 1) {
    const key = `${word.symbols[index]}\u0000${word.symbols[index + 1]}`;
    const next = (counts.get(key) ?? 0) + sign * word.count;
    if (next <= 0) counts.delete(key);
    else counts.set(key, next);
  }
}

const byteLevelComponent = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };

/** The `tokenizer.json` object of a trained BPE. */
export function tokenizerJsonOf(bpe: ByteLevelBpe): Record<string, unknown> {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: bpe.addedTokens.map((token) => ({
      id: token.id,
      content: token.content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: token.special,
    })),
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: splitPatternSource }, behavior: 'Isolated', invert: false },
        byteLevelComponent,
      ],
    },
    post_processor: byteLevelComponent,
    decoder: byteLevelComponent,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(bpe.vocabulary),
      merges: bpe.merges,
    },
  };
}

/** The `tokenizer_config.json` object: ChatML template, `<|im_end|>` as eos, no bos. */
export function tokenizerConfigOf(bpe: ByteLevelBpe): Record<string, unknown> {
  const addedTokensDecoder: Record<string, unknown> = {};
  for (const token of bpe.addedTokens) {
    addedTokensDecoder[String(token.id)] = {
      content: token.content,
      lstrip: false,
      normalized: false,
      rstrip: false,
      single_word: false,
      special: token.special,
    };
  }
  return {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: addedTokensDecoder,
    additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
    bos_token: null,
    chat_template: chatmlTemplate,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    errors: 'replace',
    model_max_length: 1024,
    pad_token: '<|endoftext|>',
    split_special_tokens: false,
    tokenizer_class: 'Qwen2Tokenizer',
    unk_token: null,
  };
}
