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
  const entries = new Map<string, { ordinal: number; sequence: Int32Array }>();
  let ids = 0;
  const keyOf = (sessionId: string, type: TurnType) => `${type}:${sessionId}`;
  const forget = (key: string) => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    ids -= entry.sequence.length;
    entries.delete(key);
  };
  return {
    remember(sessionId, type, ordinal, prompt, response) {
      const key = keyOf(sessionId, type);
      forget(key);
      const length = prompt.length + response.length;
      if (length > maxIds) return;
      const sequence = new Int32Array(length);
      sequence.set(prompt);
      sequence.set(response, prompt.length);
      entries.set(key, { ordinal, sequence });
      ids += length;
      // Map iteration follows insertion order, so the first key is the least recently used.
      while (ids > maxIds) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        forget(oldest.value);
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
      ids = 0;
    },
    get size() {
      return { entries: entries.size, ids };
    },
  };
}
