/**
 * Remembers the prompt+response token sequence of the latest turn per (session, turn type), the
 * base the next turn's prompt is diffed against. Entries are keyed by the turn's row sequence
 * number, so an entry that no longer describes the latest stored turn is never used. Bounded:
 * least recently used sessions are forgotten and rebuilt from the database when they return.
 *
 * The bound is a budget of token ids, not of sessions: agent prompts are ~11k ids, and a miss
 * rebuilds the whole chain from the database, so the cache must hold every session that is
 * active at once (hundreds under load) at 4 bytes an id (`Int32Array`), not a fixed few dozen.
 */
import { LRUCache } from 'lru-cache';
import type { TurnType } from '../spec/records.js';

export interface PromptSequenceCache {
  /** Remembers `prompt` followed by `response` as turn `ordinal`'s sequence. */
  remember(sessionId: string, type: TurnType, ordinal: number, prompt: readonly number[], response: readonly number[]): void;
  /** The sequence of turn `ordinal`, if it is the one remembered for the session; undefined otherwise. */
  recall(sessionId: string, type: TurnType, ordinal: number): Int32Array | undefined;
  clear(): void;
  /** Ids held, for tests and metrics. */
  readonly size: { entries: number; ids: number };
}

/** 8 Mi ids (32 MiB): ~700 concurrently active agent sessions with 11k-token prompts. */
export const defaultPromptSequenceBudget = 8 * 1024 * 1024;

export function createPromptSequenceCache(maxIds: number = defaultPromptSequenceBudget): PromptSequenceCache {
  // An empty sequence counts as one id: the cache counts sizes in positive integers.
  const entries = new LRUCache<string, { ordinal: number; sequence: Int32Array }>({ maxSize: maxIds, sizeCalculation: (entry) => Math.max(1, entry.sequence.length) });
  const keyOf = (sessionId: string, type: TurnType) => `${type}:${sessionId}`;
  return {
    remember(sessionId, type, ordinal, prompt, response) {
      const key = keyOf(sessionId, type);
      const length = prompt.length + response.length;
      // A sequence larger than the whole budget is not kept (nor copied), and the session's older one is dropped.
      if (length > maxIds) {
        entries.delete(key);
        return;
      }
      const sequence = new Int32Array(length);
      sequence.set(prompt);
      sequence.set(response, prompt.length);
      entries.set(key, { ordinal, sequence });
    },
    recall(sessionId, type, ordinal) {
      const key = keyOf(sessionId, type);
      // Only a hit counts as a use: a stale entry must not outlive sessions that are still active.
      if (entries.peek(key)?.ordinal !== ordinal) return undefined;
      return entries.get(key)?.sequence;
    },
    clear() {
      entries.clear();
    },
    get size() {
      return { entries: entries.size, ids: entries.calculatedSize };
    },
  };
}
