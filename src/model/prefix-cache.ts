/**
 * The KV of recent prompts, so a prompt that shares a prefix with one computed before (the second
 * turn of a session, another session with the same agent system prompt) computes only its new
 * tokens. Entries are keyed by token ids, hold one row of every layer's keys and values, are
 * evicted least recently used under a byte budget, and belong to one set of weights: each entry
 * names the LoRA adapter it was computed with (null: none), a lookup finds only its own adapter's
 * entries, and the transformer clears them whenever its weights change (or forgets an adapter's
 * when it unloads it).
 *
 * The forward pass over the rest of a prompt with the prefix's KV as its cache is the same
 * computation as over the whole prompt (positions, RoPE and the causal mask follow the offset), so
 * sampled tokens and log-probs agree with an uncached prefill to float rounding
 * (`transformer-sampler.test.ts`).
 */
import * as tf from '@tensorflow/tfjs';
import { LRUCache } from 'lru-cache';
import { commonPrefixLength } from '../core/token-blob-codec.js';
import type { LoraAdapter } from './lora-adapter.js';
import type { LayerCache } from './transformer-forward.js';

export interface PrefixHit {
  /** Prompt tokens the cache covers; the caller runs the rest. */
  length: number;
  /** The prefix's KV, owned by the caller (dispose it). */
  cache: LayerCache[];
}

export interface PrefixCache {
  /**
   * The longest prefix of `promptTokenIds` cached under `adapter`, leaving at least its last token
   * to run; null below the minimum.
   */
  lookup(promptTokenIds: readonly number[], adapter: LoraAdapter | null): PrefixHit | null;
  /** Keeps a copy of a prompt's KV (batch row 0), computed with `adapter`. */
  store(promptTokenIds: readonly number[], cache: readonly LayerCache[], adapter: LoraAdapter | null): void;
  /** Drops the entries of an adapter about to be disposed. */
  forget(adapter: LoraAdapter): void;
  clear(): void;
  readonly bytes: number;
}

export interface PrefixCacheOptions {
  /** Budget of the kept KV, in bytes. */
  maxBytes: number;
  /** Shorter shared prefixes are computed again: copying their KV would cost about as much. */
  minimumLength: number;
}

interface Entry {
  tokenIds: readonly number[];
  adapter: LoraAdapter | null;
  cache: LayerCache[];
  bytes: number;
}

function sliceCache(cache: readonly LayerCache[], row: number, length: number): LayerCache[] {
  return cache.map((layer) => ({
    key: tf.slice(layer.key, [row, 0, 0, 0], [1, -1, length, -1]),
    value: tf.slice(layer.value, [row, 0, 0, 0], [1, -1, length, -1]),
  }));
}

export function createPrefixCache(options: PrefixCacheOptions): PrefixCache {
  // Keyed by the entry's own copy of its prompt; an entry let go of disposes its KV.
  const entries = new LRUCache<readonly number[], Entry>({
    maxSize: options.maxBytes,
    sizeCalculation: (entry) => entry.bytes,
    dispose: (entry) => {
      for (const layer of entry.cache) tf.dispose([layer.key, layer.value]);
    },
  });

  return {
    get bytes() {
      return entries.calculatedSize;
    },
    lookup(promptTokenIds, adapter) {
      let best: Entry | null = null;
      let bestLength = 0;
      for (const entry of entries.values()) {
        if (entry.adapter !== adapter) continue;
        const length = Math.min(commonPrefixLength(entry.tokenIds, promptTokenIds), promptTokenIds.length - 1);
        if (length > bestLength) {
          best = entry;
          bestLength = length;
        }
      }
      if (best === null || bestLength < options.minimumLength) return null;
      entries.get(best.tokenIds);
      return { length: bestLength, cache: sliceCache(best.cache, 0, bestLength) };
    },
    store(promptTokenIds, cache, adapter) {
      if (promptTokenIds.length < options.minimumLength) return;
      const entryBytes = cache.reduce((total, layer) => total + (layer.key.size + layer.value.size) * 4, 0) / Math.max(1, cache[0]?.key.shape[0] ?? 1);
      if (entryBytes > options.maxBytes) return;
      // A prompt that extends a kept one replaces it; one that a kept prompt extends adds nothing.
      const kept = [...entries.values()].filter((entry) => entry.adapter === adapter);
      const covered = kept.find((entry) => commonPrefixLength(entry.tokenIds, promptTokenIds) === promptTokenIds.length);
      if (covered !== undefined) {
        entries.get(covered.tokenIds);
        return;
      }
      for (const entry of kept) if (commonPrefixLength(entry.tokenIds, promptTokenIds) === entry.tokenIds.length) entries.delete(entry.tokenIds);
      const tokenIds = [...promptTokenIds];
      // Copies, outside any tidy scope: the sampler disposes its own cache as it decodes.
      entries.set(tokenIds, { tokenIds, adapter, cache: sliceCache(cache, 0, tokenIds.length), bytes: entryBytes });
    },
    forget(adapter) {
      for (const entry of [...entries.values()]) if (entry.adapter === adapter) entries.delete(entry.tokenIds);
    },
    clear() {
      entries.clear();
    },
  };
}
