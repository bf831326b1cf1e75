import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goldenFixtures as fixtures, useGoldenModels } from './testing/use-golden-models.js';
import { loadTransformerFromFolder } from './transformer.js';
import type { SampleRequest, SampleResult } from './transformer-sampler.js';

/** A prompt of `length` tokens, distinct per `salt`. */
function promptOf(length: number, salt: number): number[] {
  return Array.from({ length }, (_, index) => ((index * 13 + salt * 7) % 90) + 3);
}

/** Requests that differ in everything a request owns: prompt length, n, parameters, seed, stops, length. */
const requests: SampleRequest[] = [
  { promptTokenIds: promptOf(5, 1), n: 2, maxTokens: 14, temperature: 1, seed: 3 },
  { promptTokenIds: promptOf(29, 2), n: 1, maxTokens: 10, temperature: 0.7, topP: 0.9, seed: 8, topLogprobs: 2 },
  { promptTokenIds: promptOf(12, 3), n: 3, maxTokens: 8, temperature: 1.3, topK: 20, seed: 1, stopTokenIds: [7, 11, 19] },
  { promptTokenIds: promptOf(40, 4), n: 1, maxTokens: 12, temperature: 0, seed: 2 },
  { promptTokenIds: promptOf(2, 5), n: 2, maxTokens: 20, temperature: 0.9, seed: 13 },
];

function expectSameSamples(actual: SampleResult, expected: SampleResult): void {
  expect(actual.sequences.map((sequence) => sequence.tokenIds)).toEqual(expected.sequences.map((sequence) => sequence.tokenIds));
  expect(actual.sequences.map((sequence) => sequence.finishReason)).toEqual(expected.sequences.map((sequence) => sequence.finishReason));
  actual.sequences.forEach((sequence, index) => {
    const alone = expected.sequences[index]?.logprobs ?? [];
    const worst = Math.max(0, ...sequence.logprobs.map((logprob, position) => Math.abs(logprob - (alone[position] ?? Number.NaN))));
    expect(worst).toBeLessThan(1e-5);
    sequence.top.forEach((entries, position) => expect(entries.map((entry) => entry.tokenId)).toEqual(expected.sequences[index]?.top[position]?.map((entry) => entry.tokenId)));
  });
}

/** Resolves when `request`'s sequences have produced `tokens` tokens in all. */
function withProgress(request: SampleRequest, tokens: number): { request: SampleRequest; reached: Promise<void> } {
  let seen = 0;
  let reach: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  return {
    request: {
      ...request,
      onToken: (event) => {
        seen += 1;
        if (seen === tokens) reach();
        return request.onToken?.(event);
      },
    },
    reached,
  };
}

// Prefix caching off here: each request must see the same cache state alone and batched.
const model = useGoldenModels((folder) => loadTransformerFromFolder(folder, { prefixCacheBytes: 0, batching: { prefillChunkTokens: 8 } }));

describe.each(['llama', 'qwen3'])('continuous batching, %s', (name) => {
  it('gives every request the tokens and log-probs it gets alone, joining and leaving mid-decode', async () => {
    const alone: SampleResult[] = [];
    for (const request of requests) alone.push(await model(name).sample(request));
    // Two start; the others join while those decode (and while long prompts prefill in chunks).
    const first = withProgress(requests[0] as SampleRequest, 5);
    const running = [model(name).sample(first.request), model(name).sample(requests[1] as SampleRequest)];
    await first.reached;
    expect(model(name).samplingLoad.runningSequences).toBeGreaterThan(0);
    running.push(model(name).sample(requests[2] as SampleRequest), model(name).sample(requests[3] as SampleRequest));
    await new Promise<void>((resolve) => setImmediate(resolve));
    running.push(model(name).sample(requests[4] as SampleRequest));
    const batched = await Promise.all(running);
    batched.forEach((result, index) => expectSameSamples(result, alone[index] as SampleResult));
    // Chunked prefill: still the model's own distribution (full re-scoring agrees).
    const long = batched[3]?.sequences[0];
    const scored = await model(name).score({ promptTokenIds: requests[3]?.promptTokenIds ?? [], continuationTokenIds: long?.tokenIds ?? [] });
    scored.logprobs.forEach((logprob, index) => expect(Math.abs(logprob - (long?.logprobs[index] ?? 0))).toBeLessThan(1e-4));
  });

  it('keeps decoding the running stream while a long prompt prefills in chunks', async () => {
    const order: string[] = [];
    const stream = withProgress({ promptTokenIds: promptOf(4, 9), maxTokens: 20, temperature: 1, seed: 4, onToken: () => void order.push('stream') }, 2);
    const streaming = model(name).sample(stream.request);
    await stream.reached;
    // 48 prompt tokens are six chunks of 8: the stream gets a token at each of them.
    const long = model(name).sample({ promptTokenIds: promptOf(48, 10), maxTokens: 2, temperature: 1, seed: 4, onToken: () => void order.push('long') });
    await Promise.all([streaming, long]);
    const tokensBeforeLong = order.indexOf('long') - 2;
    expect(tokensBeforeLong).toBeGreaterThanOrEqual(5);
  });

  it('admits requests under the running-sequence limit, each still as alone, and ends an aborted one without touching the rest', async () => {
    const limited = await loadTransformerFromFolder(join(fixtures, name), { prefixCacheBytes: 0, batching: { maxRunningSequences: 3, prefillChunkTokens: 8 } });
    try {
      const alone: SampleResult[] = [];
      for (const request of requests) alone.push(await limited.sample(request));
      const controller = new AbortController();
      const aborted = limited.sample({ ...requests[4], promptTokenIds: promptOf(6, 11), signal: controller.signal, onToken: (event) => void (event.step === 3 && controller.abort()) } as SampleRequest);
      const results = Promise.all(requests.map((request) => limited.sample(request)));
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(limited.samplingLoad.runningSequences).toBeLessThanOrEqual(3);
      expect(limited.samplingLoad.waitingRequests).toBeGreaterThan(0);
      const abortedResult = await aborted;
      expect(abortedResult.sequences.every((sequence) => sequence.finishReason === 'aborted')).toBe(true);
      (await results).forEach((result, index) => expectSameSamples(result, alone[index] as SampleResult));
      await limited.whenSamplingIdle();
      expect(limited.samplingLoad).toEqual({ runningSequences: 0, waitingRequests: 0 });
    } finally {
      limited.dispose();
    }
  });
});

describe('continuous batching with the prefix cache', () => {
  it('lets a joining request reuse a cached prefix and still sample what an uncached run samples', async () => {
    const cached = await loadTransformerFromFolder(join(fixtures, 'llama'), { batching: { prefillChunkTokens: 8 } });
    try {
      const system = promptOf(36, 12);
      const turn = { promptTokenIds: [...system, 5, 6, 7], maxTokens: 8, temperature: 1, seed: 21 };
      const expected = await model('llama').sample(turn);
      await cached.sample({ promptTokenIds: [...system, 9], maxTokens: 2, temperature: 1, seed: 1 });
      const stream = withProgress({ promptTokenIds: promptOf(5, 13), maxTokens: 16, temperature: 1, seed: 2 }, 2);
      const streaming = cached.sample(stream.request);
      await stream.reached;
      const actual = await cached.sample(turn);
      await streaming;
      expect(actual.sequences[0]?.tokenIds).toEqual(expected.sequences[0]?.tokenIds);
      actual.sequences[0]?.logprobs.forEach((logprob, index) => expect(Math.abs(logprob - (expected.sequences[0]?.logprobs[index] ?? 0))).toBeLessThan(1e-4));
    } finally {
      cached.dispose();
    }
  });
});
