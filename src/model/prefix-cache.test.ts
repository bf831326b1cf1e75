import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initializeTensorBackend } from '../tensor/index.js';
import type { LoraAdapter } from './lora-adapter.js';
import { createPrefixCache } from './prefix-cache.js';
import type { LayerCache } from './transformer-forward.js';

/** One layer's KV of `length` positions whose values are the positions, so slices can be checked. */
function kvOf(length: number): LayerCache[] {
  const values = Float32Array.from({ length }, (_, position) => position);
  return [{ key: tf.tensor4d(values, [1, 1, length, 1]), value: tf.tensor4d(values, [1, 1, length, 1]) }];
}

beforeAll(async () => {
  await initializeTensorBackend({ backend: 'cpu' });
});

describe('createPrefixCache', () => {
  it('finds the longest kept prefix, leaving the last prompt token to run, and hands out a copy of its KV', async () => {
    const cache = createPrefixCache({ maxBytes: 1 << 20, minimumLength: 4 });
    const first = [1, 2, 3, 4, 5, 6, 7, 8];
    cache.store(first, kvOf(first.length), null);
    expect(cache.lookup([9, 9, 9, 9, 9], null)).toBeNull();
    expect(cache.lookup([1, 2, 3, 9, 9], null)).toBeNull(); // 3 shared tokens: under the minimum
    const hit = cache.lookup([1, 2, 3, 4, 5, 6, 70], null);
    expect(hit?.length).toBe(6);
    expect(Array.from(await (hit?.cache[0]?.key as tf.Tensor).data())).toEqual([0, 1, 2, 3, 4, 5]);
    // The same prompt again: everything but its last token.
    expect(cache.lookup(first, null)?.length).toBe(7);
  });

  it('keeps one entry for a prompt and its extension, and evicts the least recently used under its budget', () => {
    const perPosition = 2 * 4; // a key and a value of one float each
    const cache = createPrefixCache({ maxBytes: 20 * perPosition, minimumLength: 4 });
    const a = [1, 2, 3, 4, 5, 6];
    cache.store(a, kvOf(a.length), null);
    cache.store([...a, 7, 8], kvOf(8), null);
    expect(cache.bytes).toBe(8 * perPosition);
    cache.store(a, kvOf(a.length), null); // covered by the extension: nothing new
    expect(cache.bytes).toBe(8 * perPosition);
    const b = [9, 9, 9, 9, 9, 9, 9, 9, 9, 9];
    cache.store(b, kvOf(b.length), null);
    expect(cache.bytes).toBe(18 * perPosition);
    const c = [5, 5, 5, 5, 5, 5];
    cache.store(c, kvOf(c.length), null); // over budget: the oldest (a's extension) goes
    expect(cache.bytes).toBe(16 * perPosition);
    expect(cache.lookup([...a, 7, 8, 9], null)).toBeNull();
    expect(cache.lookup([...b, 1], null)?.length).toBe(10);
    cache.clear();
    expect(cache.bytes).toBe(0);
    expect(cache.lookup([...b, 1], null)).toBeNull();
  });

  it('disposes the KV copy of every entry it lets go of', () => {
    const cache = createPrefixCache({ maxBytes: 10 * 2 * 4, minimumLength: 4 });
    const kv = kvOf(8);
    const before = tf.memory().numTensors;
    cache.store([1, 2, 3, 4, 5, 6, 7, 8], kv, null);
    expect(tf.memory().numTensors).toBe(before + 2);
    cache.store([8, 7, 6, 5, 4, 3, 2, 1], kv, null); // over budget: the first entry goes
    expect(tf.memory().numTensors).toBe(before + 2);
    cache.clear();
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose(kv.flatMap((layer) => [layer.key, layer.value]));
  });

  it("finds only the entries of the lookup's own adapter, and forgets an adapter's entries", () => {
    const cache = createPrefixCache({ maxBytes: 1 << 20, minimumLength: 4 });
    // Any object stands for an adapter: entries are matched by identity.
    const adapter = { options: { rank: 1, alpha: 1, targetModules: [] } } as unknown as LoraAdapter;
    const other = { options: { rank: 1, alpha: 1, targetModules: [] } } as unknown as LoraAdapter;
    const prompt = [1, 2, 3, 4, 5, 6, 7, 8];
    cache.store(prompt, kvOf(prompt.length), adapter);
    expect(cache.lookup([...prompt, 9], null)).toBeNull();
    expect(cache.lookup([...prompt, 9], other)).toBeNull();
    expect(cache.lookup([...prompt, 9], adapter)?.length).toBe(8);
    // The same prompt under the base model is an entry of its own, not a replacement.
    cache.store(prompt, kvOf(prompt.length), null);
    expect(cache.lookup([...prompt, 9], null)?.length).toBe(8);
    cache.forget(adapter);
    expect(cache.lookup([...prompt, 9], adapter)).toBeNull();
    expect(cache.lookup([...prompt, 9], null)?.length).toBe(8);
  });
});
