/**
 * Remembers the prompt+response token sequence of the latest turn per (session, turn type), the
 * base the next turn's prompt is diffed against. Entries are keyed by the turn's row sequence
 * number, so an entry that no longer describes the latest stored turn is never used. Bounded:
 * least recently used sessions are forgotten and rebuilt from the database when they return.
 */
import type { TurnType } from '../spec/records.js';

export interface PromptSequenceCache {
  remember(sessionId: string, type: TurnType, ordinal: number, sequence: number[]): void;
  /** The sequence of turn `ordinal`, if it is the one remembered for the session; undefined otherwise. */
  recall(sessionId: string, type: TurnType, ordinal: number): number[] | undefined;
  clear(): void;
}

export function createPromptSequenceCache(capacity: number): PromptSequenceCache {
  const entries = new Map<string, { ordinal: number; sequence: number[] }>();
  const keyOf = (sessionId: string, type: TurnType) => `${type}:${sessionId}`;
  return {
    remember(sessionId, type, ordinal, sequence) {
      const key = keyOf(sessionId, type);
      entries.delete(key);
      entries.set(key, { ordinal, sequence });
      // Map iteration follows insertion order, so the first key is the least recently used.
      while (entries.size > capacity) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        entries.delete(oldest.value);
      }
    },
    recall(sessionId, type, ordinal) {
      const key = keyOf(sessionId, type);
      const entry = entries.get(key);
      if (entry === undefined || entry.ordinal !== ordinal) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return entry.sequence;
    },
    clear() {
      entries.clear();
    },
  };
}
