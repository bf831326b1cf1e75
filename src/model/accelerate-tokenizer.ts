/**
 * Speed-ups for a `@huggingface/tokenizers` instance that change no output. A 50 KB agent prompt
 * took 35–100 ms to encode, mostly in three places:
 * - the byte-level pre-tokenizer maps every UTF-8 byte through an object lookup and
 *   `Array.from(...).join('')` per piece (about 70% of the time at first);
 * - generic `flat`/`flatMap` over every piece in `encode` and the pre-tokenizer sequence;
 * - the BPE word cache, an LRU that deletes and re-inserts the key on every hit, and the merge
 *   rank lookup, which builds a JSON string for every candidate pair.
 * The byte-level pre-tokenizer is replaced on the instance by code that computes the same strings,
 * and `encode` without special tokens (the prompt path) gets a direct loop: split at added tokens,
 * normalize, pre-tokenize, then look each piece's ids up in a memo before running BPE. It is used
 * only for configurations where it does what the library does step for step (BPE model, no
 * lstrip/rstrip/normalized added tokens, a pre-tokenizer built from ByteLevel, Split and Digits).
 *
 * The package's type declarations do not resolve its component classes under NodeNext, so the
 * components are found by walking `tokenizer.json` alongside the instance and checked by shape;
 * anything unexpected is left alone (slower, never different). `accelerate-tokenizer.test.ts`
 * checks equality with an untouched instance and that the speed-ups engage on the fixtures.
 */
import type { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';

/** Words longer than this are not memoized (the library itself caches below 256 characters). */
const longestMemoizedWord = 256;
/** The memo is dropped wholesale when full: cheaper than LRU bookkeeping on every hit. */
const memoCapacity = 50_000;

interface ByteLevelPreTokenizerShape {
  add_prefix_space: boolean;
  use_regex: boolean;
  pattern: RegExp;
  byte_encoder: Record<number, string>;
  pre_tokenize_text(text: string): string[];
}

interface BpeShape {
  bpe(word: string): string[];
}

interface BpeQueueNode {
  token: string;
  bias: number;
  score?: number;
  next: BpeQueueNode;
}

interface BpeRankShape {
  merges: unknown[];
  add_node(queue: { push(node: BpeQueueNode): void }, node: BpeQueueNode): void;
}

export interface AccelerationReport {
  byteLevelPreTokenizers: number;
  bpe: boolean;
  /** Merge ranks looked up in nested maps instead of by `JSON.stringify([left, right])` per pair. */
  pairRanks: boolean;
  /** Whether `encodeWithoutSpecialTokens` is the fast loop (else it is the library's encode). */
  directEncode: boolean;
}

export interface AcceleratedTokenizer {
  report: AccelerationReport;
  /** The same ids as `library.encode(text, { add_special_tokens: false }).ids`. */
  encodeWithoutSpecialTokens(text: string): number[];
}

/** Pre-tokenizers that ignore the section index and run piece by piece. */
const directPreTokenizerTypes = new Set(['ByteLevel', 'Split', 'Digits']);
/** Piece ids are memoized up to this many entries, then the memo starts over. */
const pieceMemoCapacity = 100_000;
/**
 * Long sections (the text between two added tokens: a 40 KB system prompt, the tool list) come
 * back unchanged with every turn of a session; their ids are kept whole, oldest dropped first.
 */
const shortestCachedSection = 1024;
const defaultSectionCacheCharacters = 4_000_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null;
}

function isByteLevelShape(value: unknown): value is ByteLevelPreTokenizerShape {
  return (
    isRecord(value) &&
    typeof value.add_prefix_space === 'boolean' &&
    typeof value.use_regex === 'boolean' &&
    value.pattern instanceof RegExp &&
    isRecord(value.byte_encoder) &&
    typeof value.pre_tokenize_text === 'function'
  );
}

function byteTableOf(preTokenizer: ByteLevelPreTokenizerShape): string[] | null {
  const table: string[] = [];
  for (let byte = 0; byte < 256; byte++) {
    const character = preTokenizer.byte_encoder[byte];
    if (typeof character !== 'string') return null;
    table.push(character);
  }
  return table;
}

function accelerateByteLevel(preTokenizer: ByteLevelPreTokenizerShape): boolean {
  const table = byteTableOf(preTokenizer);
  if (table === null) return false;
  const encoder = new TextEncoder();
  const mapBytes = (piece: string): string => {
    let mapped = '';
    for (let index = 0; index < piece.length; index++) {
      const code = piece.charCodeAt(index);
      if (code > 127) {
        mapped = '';
        for (const byte of encoder.encode(piece)) mapped += table[byte];
        return mapped;
      }
      mapped += table[code];
    }
    return mapped;
  };
  preTokenizer.pre_tokenize_text = (text: string): string[] => {
    if (preTokenizer.add_prefix_space && !text.startsWith(' ')) text = ' ' + text;
    const pieces = preTokenizer.use_regex ? (text.match(preTokenizer.pattern) ?? []) : [text];
    return pieces.map(mapBytes);
  };
  return true;
}

/** Walks the pre-tokenizer config and the instance built from it together. */
function acceleratePreTokenizer(config: unknown, instance: unknown): number {
  if (!isRecord(config) || !isRecord(instance)) return 0;
  if (config.type === 'ByteLevel') return isByteLevelShape(instance) && accelerateByteLevel(instance) ? 1 : 0;
  if (config.type === 'Sequence' && Array.isArray(config.pretokenizers) && Array.isArray(instance.tokenizers)) {
    const children = instance.tokenizers as unknown[];
    if (children.length !== config.pretokenizers.length) return 0;
    return config.pretokenizers.reduce<number>(
      (count, child, index) => count + acceleratePreTokenizer(child, children[index]),
      0,
    );
  }
  return 0;
}

function accelerateBpe(model: BpeShape): void {
  const original = model.bpe.bind(model);
  const memo = new Map<string, string[]>();
  model.bpe = (word: string): string[] => {
    const known = memo.get(word);
    if (known !== undefined) return known;
    const pieces = original(word);
    if (word.length < longestMemoizedWord) {
      if (memo.size >= memoCapacity) memo.clear();
      memo.set(word, pieces);
    }
    return pieces;
  };
}

/** The library keys its merge ranks by a JSON string built for every candidate pair of every new word. */
function acceleratePairRanks(model: unknown): boolean {
  if (!isRecord(model) || !Array.isArray(model.merges) || typeof model.add_node !== 'function') return false;
  const ranks = new Map<string, Map<string, number>>();
  for (const [rank, merge] of (model.merges as unknown[]).entries()) {
    if (!Array.isArray(merge) || typeof merge[0] !== 'string' || typeof merge[1] !== 'string') return false;
    let byRight = ranks.get(merge[0]);
    if (byRight === undefined) {
      byRight = new Map();
      ranks.set(merge[0], byRight);
    }
    // A repeated merge keeps its last rank, as the library's Map built from the list does.
    byRight.set(merge[1], rank);
  }
  (model as unknown as BpeRankShape).add_node = (queue, node) => {
    const rank = ranks.get(node.token)?.get(node.next.token);
    if (rank !== undefined) {
      node.score = rank + node.bias;
      queue.push(node);
    }
  };
  return true;
}

type PieceSplitter = (piece: string) => string[];

/** A pre-tokenizer as a plain function over one piece, or null when the tree is not understood. */
function directPreTokenizer(config: unknown, instance: unknown): PieceSplitter | null {
  if (config === null || config === undefined) return instance === null ? (piece) => [piece] : null;
  if (!isRecord(config) || !isRecord(instance)) return null;
  if (typeof config.type === 'string' && directPreTokenizerTypes.has(config.type)) {
    const leaf = instance as { pre_tokenize_text?: unknown };
    if (typeof leaf.pre_tokenize_text !== 'function') return null;
    const split = leaf.pre_tokenize_text as (text: string) => unknown;
    return (piece) => {
      const pieces = split.call(instance, piece);
      if (!Array.isArray(pieces) || !pieces.every((each) => typeof each === 'string')) {
        throw new Error(`pre-tokenizer ${String(config.type)} returned something other than strings`);
      }
      return pieces as string[];
    };
  }
  if (config.type === 'Sequence' && Array.isArray(config.pretokenizers) && Array.isArray(instance.tokenizers)) {
    const children = instance.tokenizers as unknown[];
    if (children.length !== config.pretokenizers.length) return null;
    const steps: PieceSplitter[] = [];
    for (const [index, child] of config.pretokenizers.entries()) {
      const step = directPreTokenizer(child, children[index]);
      if (step === null) return null;
      steps.push(step);
    }
    return (piece) => {
      let pieces = [piece];
      for (const step of steps) {
        const next: string[] = [];
        for (const each of pieces) for (const part of step(each)) next.push(part);
        pieces = next;
      }
      return pieces;
    };
  }
  return null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

interface LibraryInternals {
  normalizer: ((text: string) => string) | null;
  model: ((pieces: string[]) => string[]) & { fuse_unk?: unknown; unk_token_id?: number };
}

export interface AccelerateTokenizerOptions {
  /** Total characters of long sections whose ids are kept (4 M by default). */
  sectionCacheCharacters?: number;
}

function createDirectEncoder(
  library: LibraryTokenizer,
  tokenizerJson: Record<string, unknown>,
  config: Record<string, unknown>,
  sectionCacheCharacters: number,
): ((text: string) => number[] | null) | null {
  const modelConfig = tokenizerJson.model;
  if (!isRecord(modelConfig) || modelConfig.type !== 'BPE' || modelConfig.fuse_unk === true) return null;
  if (config.remove_space === true || config.do_lowercase_and_remove_accent === true) return null;
  const internals = library as unknown as LibraryInternals;
  if (typeof internals.model !== 'function') return null;
  const normalize = internals.normalizer;
  if (normalize !== null && typeof normalize !== 'function') return null;
  const maybeSplitPiece = directPreTokenizer(tokenizerJson.pre_tokenizer, library.pre_tokenizer);
  if (maybeSplitPiece === null) return null;
  const splitPiece: PieceSplitter = maybeSplitPiece;

  const addedIds = new Map<string, number>();
  for (const token of library.get_added_tokens_decoder().values()) {
    // The library splits these out after normalization or strips around them; not mirrored here.
    if (token.lstrip || token.rstrip || (token.normalized && normalize !== null)) return null;
    addedIds.set(token.content, token.id);
  }
  // Longest first, so the alternation finds the longest token at the leftmost position, as the
  // library's dictionary trie does. No `u` flag: the trie walks UTF-16 code units too.
  const contents = [...addedIds.keys()].filter((content) => content.length > 0).sort((a, b) => b.length - a.length);
  const addedTokenPattern = contents.length === 0 ? null : new RegExp(contents.map(escapeRegExp).join('|'), 'g');
  const unknownId = internals.model.unk_token_id;
  const pieceMemo = new Map<string, number[]>();
  const sectionCache = new Map<string, number[]>();
  let sectionCacheSize = 0;

  function remember(section: string, ids: number[]): void {
    if (section.length > sectionCacheCharacters / 4) return;
    sectionCache.set(section, ids);
    sectionCacheSize += section.length;
    for (const [oldest] of sectionCache) {
      if (sectionCacheSize <= sectionCacheCharacters) break;
      sectionCache.delete(oldest);
      sectionCacheSize -= oldest.length;
    }
  }

  function idsOfPiece(piece: string): number[] | null {
    const known = pieceMemo.get(piece);
    if (known !== undefined) return known;
    const ids: number[] = [];
    for (const token of internals.model([piece])) {
      const id = addedIds.get(token) ?? library.token_to_id(token) ?? unknownId;
      if (id === undefined) return null;
      ids.push(id);
    }
    if (piece.length < longestMemoizedWord) {
      if (pieceMemo.size >= pieceMemoCapacity) pieceMemo.clear();
      pieceMemo.set(piece, ids);
    }
    return ids;
  }

  function encodeSection(section: string, ids: number[]): boolean {
    if (section.length < shortestCachedSection) return encodeUncachedSection(section, ids);
    const cached = sectionCache.get(section);
    if (cached === undefined) {
      const sectionIds: number[] = [];
      if (!encodeUncachedSection(section, sectionIds)) return false;
      remember(section, sectionIds);
      for (const id of sectionIds) ids.push(id);
    } else {
      for (const id of cached) ids.push(id);
    }
    return true;
  }

  function encodeUncachedSection(section: string, ids: number[]): boolean {
    if (section.length === 0) return true;
    const normalized = normalize === null ? section : normalize(section);
    if (normalized.length === 0) return true;
    const whole = addedIds.get(normalized);
    if (whole !== undefined) {
      ids.push(whole);
      return true;
    }
    for (const piece of splitPiece(normalized)) {
      if (piece.length === 0) continue;
      const pieceIds = idsOfPiece(piece);
      if (pieceIds === null) return false;
      for (const id of pieceIds) ids.push(id);
    }
    return true;
  }

  return (text) => {
    const ids: number[] = [];
    let position = 0;
    if (addedTokenPattern !== null) {
      for (const match of text.matchAll(addedTokenPattern)) {
        if (!encodeSection(text.slice(position, match.index), ids)) return null;
        const id = addedIds.get(match[0]);
        if (id === undefined) return null;
        ids.push(id);
        position = match.index + match[0].length;
      }
    }
    return encodeSection(text.slice(position), ids) ? ids : null;
  };
}

export function accelerateTokenizer(
  library: LibraryTokenizer,
  tokenizerJson: Record<string, unknown>,
  config: Record<string, unknown> = {},
  options: AccelerateTokenizerOptions = {},
): AcceleratedTokenizer {
  const byteLevelPreTokenizers = acceleratePreTokenizer(tokenizerJson.pre_tokenizer, library.pre_tokenizer);
  const modelConfig = tokenizerJson.model;
  const model: unknown = library.model;
  const bpe = isRecord(modelConfig) && modelConfig.type === 'BPE' && isRecord(model) && typeof model.bpe === 'function';
  if (bpe) accelerateBpe(model as unknown as BpeShape);
  const pairRanks = bpe && acceleratePairRanks(model);
  const direct = createDirectEncoder(
    library,
    tokenizerJson,
    config,
    options.sectionCacheCharacters ?? defaultSectionCacheCharacters,
  );
  const libraryEncode = (text: string): number[] => library.encode(text, { add_special_tokens: false }).ids;
  return {
    report: { byteLevelPreTokenizers, bpe, pairRanks, directEncode: direct !== null },
    // A piece the vocabulary cannot represent sends the whole text through the library instead.
    encodeWithoutSpecialTokens: direct === null ? libraryEncode : (text) => direct(text) ?? libraryEncode(text),
  };
}
