/**
 * Remembers the JSON of long strings as UTF-8 bytes, so a string resent unchanged with every
 * request (an agent's ~40 KB system prompt) is escaped and encoded once rather than on every
 * request: `JSON.stringify` of such a prompt, full of line breaks and quotes, cost about three
 * times as long as parsing it, and as bytes it goes into the request body without being flattened
 * into a string and encoded again.
 *
 * Only strings longer than V8's hash limit are remembered: V8 hashes a string up to 16,383
 * characters from its contents, which costs about as much as escaping it, but a longer one from
 * its length alone, so finding it costs one comparison with each remembered string of that length.
 * Bounded by the characters and bytes it holds; least recently used strings go first.
 */

import { LRUCache } from 'lru-cache';
import { isHashedByLength } from '../../core/string-interner.js';

export interface JsonStringMemoOptions {
  /** Characters of strings plus bytes of their JSON held at most; default 4 Mi. */
  budgetCharacters?: number;
}

export interface JsonStringMemo {
  /** Exactly `Buffer.from(JSON.stringify(text))` for a long string; undefined for a short one. */
  jsonBytesOf(text: string): Buffer | undefined;
  readonly size: { entries: number; characters: number };
}

export function createJsonStringMemo(options: JsonStringMemoOptions = {}): JsonStringMemo {
  const known = new LRUCache<string, Buffer>({ maxSize: options.budgetCharacters ?? 4 * 1024 * 1024, sizeCalculation: (json, text) => text.length + json.length });
  return {
    jsonBytesOf(text) {
      if (!isHashedByLength(text)) return undefined;
      const remembered = known.get(text);
      if (remembered !== undefined) return remembered;
      const json = Buffer.from(JSON.stringify(text));
      // JSON larger than the whole budget is returned but not kept.
      known.set(text, json);
      return json;
    },
    get size() {
      return { entries: known.size, characters: known.calculatedSize };
    },
  };
}
