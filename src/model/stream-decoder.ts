/**
 * Incremental detokenizer. A byte-level token may hold part of a UTF-8 character (an emoji is often
 * two or more tokens), and some decoders change a token's text depending on its neighbours, so the
 * text of token n is not `decode([n])`. The standard answer (vLLM, TGI): decode a small window that
 * starts a few tokens back, emit only what it adds beyond the already emitted part, and wait while
 * the window ends in U+FFFD, the mark of an incomplete character.
 *
 * The concatenation of everything `push` and `finish` return equals the decode of all ids at once.
 */
import type { StreamDecoder } from '../spec/chat-renderer.js';
import type { DecodeOptions, Tokenizer } from './tokenizer.js';

const replacementCharacter = '\uFFFD';

export interface CreateStreamDecoderOptions {
  /** Drops special tokens (eos, `<|im_end|>`), as a served reply does; true by default. */
  skipSpecialTokens?: boolean;
}

export function createStreamDecoder(
  tokenizer: Pick<Tokenizer, 'decode'>,
  options: CreateStreamDecoderOptions = {},
): StreamDecoder {
  const decodeOptions: DecodeOptions = { skipSpecialTokens: options.skipSpecialTokens ?? true };
  const tokenIds: number[] = [];
  /** Start of the decode window: text before it has been emitted and no longer matters. */
  let prefixOffset = 0;
  /** End of the emitted part of the window. */
  let readOffset = 0;

  function advance(force: boolean): string {
    const emitted = tokenizer.decode(tokenIds.slice(prefixOffset, readOffset), decodeOptions);
    const window = tokenizer.decode(tokenIds.slice(prefixOffset), decodeOptions);
    if (window.length <= emitted.length) return '';
    if (!force && window.endsWith(replacementCharacter)) return '';
    prefixOffset = readOffset;
    readOffset = tokenIds.length;
    return window.slice(emitted.length);
  }

  return {
    push(tokenId) {
      tokenIds.push(tokenId);
      return advance(false);
    },
    finish() {
      // Whatever is still incomplete now never will be; it goes out as U+FFFD, as a full decode shows it.
      return advance(true);
    },
  };
}
