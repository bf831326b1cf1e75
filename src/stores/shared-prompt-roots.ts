/**
 * Recent turns whose prompts were stored whole ("roots"), so a session's first turn can store only
 * what it does not share with one of them. An agent's sessions all open with the same system prompt
 * and tool schemas (OpenClaw's: ~11k ids, 44 KB as Int32), and without this every session stored
 * them again: on SQLite ~11 overflow pages written at the insert and again when the next state was
 * linked, two fifths of the store's write-ahead-log pages in the gateway benchmark.
 *
 * Only roots are candidates, never turns that have a base themselves, so a prompt's base chain is
 * at most its session's turns plus one root, however many sessions share the prefix. Remembered
 * only after the root's commit (the caller's duty), and lost on restart: the next session after a
 * restart stores its prompt whole and becomes a root.
 */
import { commonPrefixLength } from '../core/token-blob-codec.js';

export interface SharedPromptRoots {
  /** The remembered root sharing the longest prefix with `prompt`, when it shares at least the minimum. */
  find(prompt: readonly number[]): { ordinal: number; prefixLength: number } | undefined;
  /** Remembers turn `ordinal`, stored with its whole prompt, as a root. */
  remember(ordinal: number, prompt: readonly number[]): void;
  clear(): void;
  readonly size: number;
}

export interface SharedPromptRootsOptions {
  /** Roots kept, most recently used first; a system prompt in use is found among the first few. */
  capacity?: number;
  /** Fewer shared ids than this are stored again: a link is not worth a chat template's header. */
  minimumSharedIds?: number;
}

export const defaultSharedPromptRoots = { capacity: 4, minimumSharedIds: 256 } as const;

export function createSharedPromptRoots(options: SharedPromptRootsOptions = {}): SharedPromptRoots {
  const capacity = options.capacity ?? defaultSharedPromptRoots.capacity;
  const minimumSharedIds = options.minimumSharedIds ?? defaultSharedPromptRoots.minimumSharedIds;
  // Most recently used first.
  let roots: { ordinal: number; prompt: Int32Array }[] = [];
  return {
    find(prompt) {
      let best: { root: (typeof roots)[number]; prefixLength: number } | undefined;
      for (const root of roots) {
        const prefixLength = commonPrefixLength(root.prompt, prompt);
        if (prefixLength >= minimumSharedIds && prefixLength > (best?.prefixLength ?? 0)) best = { root, prefixLength };
      }
      if (best === undefined) return undefined;
      const found = best.root;
      roots = [found, ...roots.filter((root) => root !== found)];
      return { ordinal: found.ordinal, prefixLength: best.prefixLength };
    },
    remember(ordinal, prompt) {
      if (prompt.length < minimumSharedIds || capacity === 0) return;
      roots = [{ ordinal, prompt: Int32Array.from(prompt) }, ...roots].slice(0, capacity);
    },
    clear() {
      roots = [];
    },
    get size() {
      return roots.length;
    },
  };
}
