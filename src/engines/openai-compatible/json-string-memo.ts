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
  const budget = options.budgetCharacters ?? 4 * 1024 * 1024;
  const known = new Map<string, Buffer>();
  let characters = 0;

  return {
    jsonBytesOf(text) {
      if (!isHashedByLength(text)) return undefined;
      const remembered = known.get(text);
      if (remembered !== undefined) {
        // Most recently used last, so eviction takes the oldest first.
        known.delete(text);
        known.set(text, remembered);
        return remembered;
      }
      const json = Buffer.from(JSON.stringify(text));
      const cost = text.length + json.length;
      if (cost > budget) return json;
      known.set(text, json);
      characters += cost;
      for (const [oldest, oldestJson] of known) {
        if (characters <= budget) break;
        known.delete(oldest);
        characters -= oldest.length + oldestJson.length;
      }
      return json;
    },
    get size() {
      return { entries: known.size, characters };
    },
  };
}
