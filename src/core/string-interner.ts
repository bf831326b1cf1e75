/**
 * Hands out one shared copy of long strings seen again and again: an agent resends its ~40 KB
 * system prompt with every request, and each parse makes a fresh copy of it that would otherwise
 * live as long as the request does. With the fresh copy dropped at once, a request in flight holds
 * 40 KB less for the garbage collector to copy, and everything downstream that looks the text up
 * (the upstream request's memo, the record store's message chain) compares one pointer.
 *
 * Only strings longer than V8's hash limit are interned: V8 hashes those from their length alone,
 * so finding one costs a comparison with the remembered string of that length, not a hash of its
 * contents. Bounded by the characters it holds; least recently used strings go first.
 */
import { LRUCache } from 'lru-cache';

/** V8 hashes strings up to this length from their contents (`String::kMaxHashCalcLength`). */
const v8HashedLength = 16_383;

/**
 * Whether V8 hashes `text` from its length alone, so that finding it as a map key costs one
 * comparison with each remembered string of that length rather than a pass over its contents.
 */
export function isHashedByLength(text: string): boolean {
  return text.length > v8HashedLength;
}

export interface StringInterner {
  /** `text`, or the remembered string equal to it. */
  intern(text: string): string;
  readonly size: { entries: number; characters: number };
}

export function createStringInterner(options: { budgetCharacters?: number } = {}): StringInterner {
  // The value is the remembered string itself: a lookup answers with the value, not the key.
  const known = new LRUCache<string, string>({ maxSize: options.budgetCharacters ?? 4 * 1024 * 1024, sizeCalculation: (text) => text.length });
  return {
    intern(text) {
      if (!isHashedByLength(text)) return text;
      const remembered = known.get(text);
      if (remembered !== undefined) return remembered;
      // A string larger than the whole budget is not kept.
      known.set(text, text);
      return text;
    },
    get size() {
      return { entries: known.size, characters: known.calculatedSize };
    },
  };
}
