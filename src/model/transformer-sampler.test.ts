import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import { goldenFixtures as fixtures, useGoldenModels } from './testing/use-golden-models.js';
import { loadTransformerFromFolder } from './transformer.js';

const prompt = [5, 17, 42, 8, 66];

async function adapterFiles(name: string): Promise<Record<string, Uint8Array>> {
  const folder = join(fixtures, name, 'adapter');
  return {
    'adapter_config.json': await readFile(join(folder, 'adapter_config.json')),
    'adapter_model.safetensors': await readFile(join(folder, 'adapter_model.safetensors')),
  };
}

const model = useGoldenModels(async (folder, name) => {
  const transformer = await loadTransformerFromFolder(folder, { trainParams: 'lora' });
  // A nonzero adapter, so the cached path is checked with LoRA in every projection.
  transformer.importAdapter(await adapterFiles(name));
  return transformer;
});

describe.each(['llama', 'qwen3'])('sampling %s', (name) => {
  it('records log-probs that full re-scoring reproduces, for every one of n batched samples', async () => {
    const temperature = 0.8;
    const result = await model(name).sample({
      promptTokenIds: prompt,
      n: 4,
      maxTokens: 12,
      temperature,
      topP: 0.9,
      topK: 30,
      seed: 7,
    });
    expect(result.sequences).toHaveLength(4);
    for (const sequence of result.sequences) {
      expect(sequence.tokenIds).toHaveLength(12);
      expect(sequence.finishReason).toBe('length');
      const scored = await model(name).score({ promptTokenIds: prompt, continuationTokenIds: sequence.tokenIds, temperature });
      const worst = Math.max(...scored.logprobs.map((value, index) => Math.abs(value - (sequence.logprobs[index] ?? 0))));
      expect(worst).toBeLessThan(1e-4);
    }
    // Distinct samples, not n copies of one.
    expect(new Set(result.sequences.map((sequence) => sequence.tokenIds.join())).size).toBeGreaterThan(1);
  });
});

describe.each(['llama', 'qwen3'])('prefix caching, %s', (name) => {
  it('samples the same tokens and log-probs from a cached prefix as from a whole prefill, and forgets it when the weights change', async () => {
    const uncached = await loadTransformerFromFolder(join(fixtures, name), { trainParams: 'lora', prefixCacheBytes: 0 });
    const cached = await loadTransformerFromFolder(join(fixtures, name), { trainParams: 'lora' });
    try {
      const adapter = await adapterFiles(name);
      uncached.importAdapter(adapter);
      cached.importAdapter(adapter);
      // An agent's second turn: the first turn's prompt, its reply and a new message.
      const first = Array.from({ length: 40 }, (_, index) => (index * 7) % 90 + 1);
      const second = [...first, 3, 9, 27, 81, 15, 45];
      const other = [...first.slice(0, 36), 60, 61, 62];
      for (const promptTokenIds of [first, second, other, second]) {
        const request = { promptTokenIds, n: 2, maxTokens: 6, temperature: 1, topP: 1, topK: 0, topLogprobs: 0, seed: 5, stopTokenIds: [] };
        const [expected, actual] = [await uncached.sample(request), await cached.sample(request)];
        expected.sequences.forEach((sequence, index) => {
          const got = actual.sequences[index];
          expect(got?.tokenIds).toEqual(sequence.tokenIds);
          got?.logprobs.forEach((logprob, position) => expect(logprob).toBeCloseTo(sequence.logprobs[position] ?? Number.NaN, 5));
        });
      }
      // Scoring a prompt that shares the cached prefix (an OPD teacher's) gives the uncached scores.
      const teacher = { promptTokenIds: [...first, 11, 12, 13], continuationTokenIds: [4, 5, 6, 7], topLogprobs: 3 };
      const [expectedScore, actualScore] = [await uncached.score(teacher), await cached.score(teacher)];
      actualScore.logprobs.forEach((logprob, position) => expect(logprob).toBeCloseTo(expectedScore.logprobs[position] ?? Number.NaN, 5));
      expect(actualScore.top?.map((row) => row.map((entry) => entry.tokenId))).toEqual(expectedScore.top?.map((row) => row.map((entry) => entry.tokenId)));
      // New weights (the base's zero adapter): KV kept from the old ones must not be used.
      const base = await loadTransformerFromFolder(join(fixtures, name), { trainParams: 'lora', prefixCacheBytes: 0 });
      try {
        cached.importAdapter(await base.exportAdapter({ baseModelNameOrPath: name }));
        const request = { promptTokenIds: second, n: 1, maxTokens: 4, temperature: 1, topP: 1, topK: 0, topLogprobs: 0, seed: 9, stopTokenIds: [] };
        const [expected, actual] = [await base.sample(request), await cached.sample(request)];
        expect(actual.sequences[0]?.tokenIds).toEqual(expected.sequences[0]?.tokenIds);
        actual.sequences[0]?.logprobs.forEach((logprob, position) => expect(logprob).toBeCloseTo(expected.sequences[0]?.logprobs[position] ?? Number.NaN, 5));
      } finally {
        base.dispose();
      }
    } finally {
      uncached.dispose();
      cached.dispose();
    }
  });
});

describe('sampling options', () => {
  it('is deterministic for a seed and differs across seeds', async () => {
    const request = { promptTokenIds: prompt, n: 2, maxTokens: 10, temperature: 1, topP: 1, topK: 0 };
    const first = await model('qwen3').sample({ ...request, seed: 11 });
    const again = await model('qwen3').sample({ ...request, seed: 11 });
    const other = await model('qwen3').sample({ ...request, seed: 12 });
    expect(again.sequences.map((sequence) => sequence.tokenIds)).toEqual(first.sequences.map((sequence) => sequence.tokenIds));
    expect(other.sequences.map((sequence) => sequence.tokenIds)).not.toEqual(first.sequences.map((sequence) => sequence.tokenIds));
  });

  it('picks the most likely token at temperature 0 and reports the same alternatives as scoring', async () => {
    const result = await model('llama').sample({ promptTokenIds: prompt, maxTokens: 6, temperature: 0, topLogprobs: 3, seed: 1 });
    const sequence = result.sequences[0];
    if (sequence === undefined) throw new Error('no sequence');
    const scored = await model('llama').score({ promptTokenIds: prompt, continuationTokenIds: sequence.tokenIds, topLogprobs: 3 });
    sequence.tokenIds.forEach((tokenId, index) => {
      expect(sequence.top[index]?.[0]?.tokenId).toBe(tokenId);
      expect(sequence.top[index]?.map((entry) => entry.tokenId)).toEqual(scored.top[index]?.map((entry) => entry.tokenId));
      expect(Math.abs((sequence.top[index]?.[2]?.logprob ?? 0) - (scored.top[index]?.[2]?.logprob ?? 1))).toBeLessThan(1e-4);
    });
  });

  it('only samples inside the top-k set', async () => {
    const result = await model('qwen3').sample({ promptTokenIds: prompt, n: 8, maxTokens: 1, temperature: 1.5, topK: 2, topLogprobs: 2, seed: 3 });
    for (const sequence of result.sequences) {
      expect(sequence.top[0]?.map((entry) => entry.tokenId)).toContain(sequence.tokenIds[0]);
    }
  });

  it('stops at stop tokens (kept in the output) and when onToken says stop, streaming every token', async () => {
    const probe = await model('qwen3').sample({ promptTokenIds: prompt, maxTokens: 1, temperature: 0 });
    const greedyFirst = probe.sequences[0]?.tokenIds[0] ?? -1;
    const stopped = await model('qwen3').sample({ promptTokenIds: prompt, maxTokens: 8, temperature: 0, stopTokenIds: [greedyFirst] });
    expect(stopped.sequences[0]?.tokenIds).toEqual([greedyFirst]);
    expect(stopped.sequences[0]?.finishReason).toBe('stop');

    const streamed: string[] = [];
    const result = await model('qwen3').sample({
      promptTokenIds: prompt,
      n: 3,
      maxTokens: 8,
      temperature: 1,
      seed: 5,
      onToken: (event) => {
        streamed.push(`${event.sequenceIndex}:${event.step}:${event.tokenId}`);
        return event.sequenceIndex === 1 && event.step === 2 ? 'stop' : undefined;
      },
    });
    expect(result.sequences.map((sequence) => sequence.tokenIds.length)).toEqual([8, 3, 8]);
    expect(result.sequences[1]?.finishReason).toBe('stop');
    expect(streamed).toHaveLength(19);
    const expected = result.sequences.flatMap((sequence, index) => sequence.tokenIds.map((tokenId, step) => `${index}:${step}:${tokenId}`));
    expect([...streamed].sort()).toEqual([...expected].sort());
  });

  it('ends aborted samples and rejects prompts that do not fit', async () => {
    const controller = new AbortController();
    const result = await model('qwen3').sample({
      promptTokenIds: prompt,
      maxTokens: 20,
      temperature: 1,
      seed: 1,
      signal: controller.signal,
      onToken: (event) => {
        if (event.step === 1) controller.abort();
      },
    });
    expect(result.sequences[0]?.finishReason).toBe('aborted');
    expect(result.sequences[0]?.tokenIds).toHaveLength(2);
    await expect(model('qwen3').sample({ promptTokenIds: prompt, maxTokens: 64 })).rejects.toThrow(ClawrlError);
    await expect(model('qwen3').sample({ promptTokenIds: [500], maxTokens: 1 })).rejects.toThrow(/vocabulary/);
    // A KV cache past the 4 GiB wasm heap is refused up front instead of crashing the heap.
    await expect(model('qwen3').sample({ promptTokenIds: prompt, n: 200_000, maxTokens: 50 })).rejects.toThrow(/wasm memory/);
  });
});
