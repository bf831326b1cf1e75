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
  const budget = options.budgetCharacters ?? 4 * 1024 * 1024;
  // The entry keeps the remembered string itself: `Map.get` answers with the value, not the key.
  const known = new Map<string, { text: string; used: number }>();
  let characters = 0;
  let clock = 0;

  /** Drops the least recently used strings down to three quarters of the budget, so it runs rarely. */
  function evict(): void {
    const byAge = [...known.values()].sort((a, b) => a.used - b.used);
    for (const entry of byAge) {
      if (characters <= (budget * 3) / 4) break;
      known.delete(entry.text);
      characters -= entry.text.length;
    }
  }

  return {
    intern(text) {
      if (!isHashedByLength(text)) return text;
      const entry = known.get(text);
      if (entry !== undefined) {
        entry.used = ++clock;
        return entry.text;
      }
      if (text.length > budget) return text;
      known.set(text, { text, used: ++clock });
      characters += text.length;
      if (characters > budget) evict();
      return text;
    },
    get size() {
      return { entries: known.size, characters };
    },
  };
}
