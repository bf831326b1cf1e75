/**
 * A model's tokenizer, loaded from the objects in `tokenizer.json` and `tokenizer_config.json`,
 * on top of `@huggingface/tokenizers` (pure TypeScript, same algorithms as the Rust crate).
 *
 * Decoding never applies `clean_up_tokenization_spaces`: that post-pass (" ." → ".") is not
 * reversible and cannot be applied consistently to a stream, so streamed and whole decodes would
 * disagree. vLLM's incremental detokenizer skips it for the same reason.
 */
import { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';
import { accelerateTokenizer } from './accelerate-tokenizer.js';
import type { TokenizerConfig } from './tokenizer-config.js';

export interface EncodeOptions {
  /** Adds what the tokenizer's post-processor adds (Llama-3's bos); true by default, as in HF. */
  addSpecialTokens?: boolean;
}

export interface DecodeOptions {
  /** Drops added tokens flagged `special` (`<|im_end|>`, bos, ...); false by default. */
  skipSpecialTokens?: boolean;
}

export interface SpecialTokenIds {
  bos: number | null;
  eos: number | null;
  pad: number | null;
  /** ChatML's end of turn, when the vocabulary has it. */
  imEnd: number | null;
  endOfText: number | null;
  /** Llama 3's end of turn, when the vocabulary has it. */
  endOfTurn: number | null;
}

export interface Tokenizer {
  encode(text: string, options?: EncodeOptions): number[];
  /** Ids the vocabulary does not have decode to nothing, as in the Rust tokenizers. */
  decode(tokenIds: readonly number[], options?: DecodeOptions): string;
  /** The text of one token (special tokens included); '' for an id outside the vocabulary. */
  tokenText(tokenId: number): string;
  /** The id of a token given its exact text in the vocabulary (not its byte-level form). */
  tokenId(token: string): number | undefined;
  isSpecialToken(tokenId: number): boolean;
  readonly bosToken: string | null;
  readonly eosToken: string | null;
  readonly specialTokenIds: SpecialTokenIds;
  /** Highest token id + 1, added tokens included (the model's `vocab_size` may be larger). */
  readonly vocabularySize: number;
}

export interface CreateTokenizerOptions {
  /** The parsed `tokenizer.json`. */
  tokenizerJson: unknown;
  tokenizerConfig: TokenizerConfig;
}

const addedTokenSchema = z.looseObject({
  id: z.number().int().nonnegative(),
  content: z.string(),
  special: z.boolean().optional(),
});

const tokenizerJsonSchema = z.looseObject({
  model: z.looseObject({ type: z.string().optional() }),
  added_tokens: z.array(addedTokenSchema).default([]),
  normalizer: z.unknown(),
  pre_tokenizer: z.unknown(),
  post_processor: z.unknown(),
  decoder: z.unknown(),
});

function parseTokenizerJson(json: unknown): z.infer<typeof tokenizerJsonSchema> {
  const result = tokenizerJsonSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.join('.');
    throw new ClawrlError('configuration_error', `tokenizer.json: invalid field ${field} (${issue?.message ?? 'invalid'})`, {
      param: field,
    });
  }
  return result.data;
}

export function createTokenizer(options: CreateTokenizerOptions): Tokenizer {
  const tokenizerJson = parseTokenizerJson(options.tokenizerJson);
  const config = options.tokenizerConfig;
  const libraryConfig: Record<string, unknown> = {
    ...config.raw,
    bos_token: config.bosToken ?? undefined,
    eos_token: config.eosToken ?? undefined,
    pad_token: config.padToken ?? undefined,
    unk_token: config.unkToken ?? undefined,
    additional_special_tokens: config.additionalSpecialTokens,
    clean_up_tokenization_spaces: false,
  };
  // The library insists on these keys being present; real files have them, null when unused.
  const libraryJson: Record<string, unknown> = {
    ...tokenizerJson,
    normalizer: tokenizerJson.normalizer ?? null,
    pre_tokenizer: tokenizerJson.pre_tokenizer ?? null,
    post_processor: tokenizerJson.post_processor ?? null,
    decoder: tokenizerJson.decoder ?? null,
  };
  let library: LibraryTokenizer;
  try {
    library = new LibraryTokenizer(libraryJson, libraryConfig);
  } catch (error) {
    throw new ClawrlError('configuration_error', `tokenizer.json: cannot build the tokenizer (${String(error)})`, {
      cause: error,
    });
  }
  const accelerated = accelerateTokenizer(library, libraryJson, libraryConfig);

  const vocabulary = library.get_vocab(true);
  let vocabularySize = 0;
  for (const id of vocabulary.values()) vocabularySize = Math.max(vocabularySize, id + 1);

  const specialIds = new Set<number>();
  for (const token of tokenizerJson.added_tokens) if (token.special === true) specialIds.add(token.id);
  for (const token of config.additionalSpecialTokens) {
    const id = library.token_to_id(token);
    if (id !== undefined) specialIds.add(id);
  }

  const idOf = (token: string | null): number | null => (token === null ? null : (library.token_to_id(token) ?? null));
  const specialTokenIds: SpecialTokenIds = {
    bos: idOf(config.bosToken),
    eos: idOf(config.eosToken),
    pad: idOf(config.padToken),
    imEnd: idOf('<|im_end|>'),
    endOfText: idOf('<|endoftext|>'),
    endOfTurn: idOf('<|eot_id|>'),
  };

  const isKnown = (id: number): boolean => Number.isInteger(id) && library.id_to_token(id) !== undefined;

  function decode(tokenIds: readonly number[], decodeOptions: DecodeOptions = {}): string {
    const known = tokenIds.filter(isKnown);
    // The library throws on an empty list; an empty decode is simply ''.
    if (known.length === 0) return '';
    return library.decode(known, {
      skip_special_tokens: decodeOptions.skipSpecialTokens ?? false,
      clean_up_tokenization_spaces: false,
    });
  }

  return {
    encode(text, encodeOptions = {}) {
      if (encodeOptions.addSpecialTokens === false) return accelerated.encodeWithoutSpecialTokens(text);
      return library.encode(text, { add_special_tokens: true }).ids;
    },
    decode,
    tokenText(tokenId) {
      return decode([tokenId]);
    },
    tokenId(token) {
      return library.token_to_id(token);
    },
    isSpecialToken(tokenId) {
      return specialIds.has(tokenId);
    },
    bosToken: config.bosToken,
    eosToken: config.eosToken,
    specialTokenIds,
    vocabularySize,
  };
}
