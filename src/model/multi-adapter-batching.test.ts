import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import type { LoraAdapter } from './lora-adapter.js';
import { createRandomAdapterFiles } from './random-weights.js';
import { goldenFixtures as fixtures, useGoldenModels } from './testing/use-golden-models.js';
import { loadTransformerFromFolder } from './transformer.js';
import type { Transformer } from './transformer.js';
import type { SampleRequest, SampleResult } from './transformer-sampler.js';

function promptOf(length: number, salt: number): number[] {
  return Array.from({ length }, (_, index) => ((index * 11 + salt * 5) % 90) + 3);
}

/** Three random adapters on `transformer`'s base weights (different targets, ranks and seeds). */
async function loadAdapters(transformer: Transformer): Promise<LoraAdapter[]> {
  const shapes = [
    { rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] as const },
    { rank: 8, alpha: 8, targetModules: ['q_proj', 'v_proj', 'gate_proj', 'up_proj', 'down_proj'] as const },
    { rank: 4, alpha: 16, targetModules: ['o_proj', 'down_proj'] as const },
  ];
  const adapters: LoraAdapter[] = [];
  for (const [index, options] of shapes.entries()) {
    const files = await createRandomAdapterFiles(transformer.shape, { ...options, targetModules: [...options.targetModules], seed: 40 + index, standardDeviation: 0.2, baseModelNameOrPath: 'golden' });
    adapters.push(transformer.loadAdapter(files));
  }
  return adapters;
}

function largestLogprobGap(actual: SampleResult, expected: SampleResult): number {
  return Math.max(
    0,
    ...actual.sequences.flatMap((sequence, index) => sequence.logprobs.map((logprob, position) => Math.abs(logprob - (expected.sequences[index]?.logprobs[position] ?? Number.NaN)))),
  );
}

const model = useGoldenModels((folder) => loadTransformerFromFolder(folder, { prefixCacheBytes: 0, batching: { prefillChunkTokens: 8 } }));

describe.each(['llama', 'qwen3'])('requests of several adapters in one batch, %s', (name) => {
  it('gives each request the tokens and log-probs it gets alone with its adapter (the base rows none)', async () => {
    const transformer = model(name);
    const adapters = await loadAdapters(transformer);
    try {
      // Base, three adapters, the first adapter again; prompts and lengths differ so rows join and leave mid-decode.
      const requests: SampleRequest[] = [null, ...adapters, adapters[0] as LoraAdapter].map((adapter, index) => ({
        promptTokenIds: promptOf(6 + 9 * index, index),
        n: index === 2 ? 2 : 1,
        maxTokens: 8 + 3 * index,
        temperature: 1,
        seed: 10 + index,
        topLogprobs: 2,
        adapter,
      }));
      const alone: SampleResult[] = [];
      for (const request of requests) alone.push(await transformer.sample(request));
      const tensorsBefore = tf.memory().numTensors;
      const batched = await Promise.all(requests.map((request) => transformer.sample(request)));
      await transformer.whenSamplingIdle();
      // Nothing of the mixed steps outlives them (the adapters' kept side-by-side factors included).
      expect(tf.memory().numTensors).toBe(tensorsBefore);
      batched.forEach((result, index) => {
        expect(result.sequences.map((sequence) => sequence.tokenIds)).toEqual(alone[index]?.sequences.map((sequence) => sequence.tokenIds));
        expect(largestLogprobGap(result, alone[index] as SampleResult)).toBeLessThan(1e-4);
      });
      // Each adapter changes the model: the same request under the base model gets other log-probs.
      for (const [index, request] of requests.entries()) {
        if (request.adapter === null) continue;
        const scored = await transformer.score({ promptTokenIds: request.promptTokenIds, continuationTokenIds: alone[index]?.sequences[0]?.tokenIds ?? [], adapter: null });
        const adapted = await transformer.score({ promptTokenIds: request.promptTokenIds, continuationTokenIds: alone[index]?.sequences[0]?.tokenIds ?? [], adapter: request.adapter ?? null });
        adapted.logprobs.forEach((logprob, position) => expect(Math.abs(logprob - (alone[index]?.sequences[0]?.logprobs[position] ?? 0))).toBeLessThan(1e-4));
        expect(Math.max(...scored.logprobs.map((logprob, position) => Math.abs(logprob - (adapted.logprobs[position] ?? 0))))).toBeGreaterThan(1e-2);
      }
    } finally {
      for (const adapter of adapters) transformer.unloadAdapter(adapter);
    }
  });
});

describe.each(['llama', 'qwen3'])('requests of several adapters of one shape, %s', (name) => {
  it('gives each request what it gets alone when equal-rank adapters on the same modules decode side by side', async () => {
    const transformer = model(name);
    const adapters: LoraAdapter[] = [];
    for (const seed of [60, 61, 62, 63]) {
      const files = await createRandomAdapterFiles(transformer.shape, { rank: 8, alpha: 16, targetModules: ['q_proj', 'v_proj', 'o_proj'], seed, standardDeviation: 0.2, baseModelNameOrPath: 'golden' });
      adapters.push(transformer.loadAdapter(files));
    }
    try {
      // One row each (n = 1), a base row among them, equal prompt lengths so they decode in step.
      const requests: SampleRequest[] = [adapters[0], null, adapters[1], adapters[2], adapters[3]].map((adapter, index) => ({
        promptTokenIds: promptOf(7, 20 + index),
        maxTokens: 12,
        temperature: 1,
        seed: 30 + index,
        adapter: adapter ?? null,
      }));
      const alone: SampleResult[] = [];
      for (const request of requests) alone.push(await transformer.sample(request));
      const batched = await Promise.all(requests.map((request) => transformer.sample(request)));
      batched.forEach((result, index) => {
        expect(result.sequences[0]?.tokenIds).toEqual(alone[index]?.sequences[0]?.tokenIds);
        expect(largestLogprobGap(result, alone[index] as SampleResult)).toBeLessThan(1e-4);
      });
    } finally {
      for (const adapter of adapters) transformer.unloadAdapter(adapter);
    }
  });
});

describe('the prefix cache with several adapters', () => {
  it("never hands one adapter's kept prompt KV to another", async () => {
    const cached = await loadTransformerFromFolder(join(fixtures, 'llama'), { batching: { prefillChunkTokens: 8 } });
    const fresh = model('llama');
    const [first, second] = await loadAdapters(cached);
    const [freshFirst, freshSecond] = await loadAdapters(fresh);
    try {
      const system = promptOf(40, 3);
      const turn = (adapter: LoraAdapter | undefined) => ({ promptTokenIds: [...system, 4, 5], maxTokens: 6, temperature: 1, seed: 7, adapter: adapter ?? null });
      // The first adapter keeps the system prompt's KV; the second must compute its own.
      await cached.sample({ ...turn(first), promptTokenIds: [...system, 9] });
      const expected = await fresh.sample(turn(freshSecond));
      const actual = await cached.sample(turn(second));
      expect(actual.sequences[0]?.tokenIds).toEqual(expected.sequences[0]?.tokenIds);
      expect(largestLogprobGap(actual, expected)).toBeLessThan(1e-4);
      // And the first adapter's own next turn still reuses it, with its own values.
      const again = await cached.sample(turn(first));
      expect(largestLogprobGap(again, await fresh.sample(turn(freshFirst)))).toBeLessThan(1e-4);
    } finally {
      for (const adapter of [freshFirst, freshSecond]) if (adapter !== undefined) fresh.unloadAdapter(adapter);
      cached.dispose();
    }
  });
});
