import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, InferenceEngine } from '../../spec/inference-engine.js';
import { createLocalInferenceEngine } from './create-local-inference-engine.js';
import { runTimed as run, type TimedGeneration as Timed } from './testing/run-timed.js';
import { createTinyAdapterFiles, createTinyModelFolder } from './testing/create-tiny-model-folder.js';

// Worker threads run compiled JavaScript: the suite builds dist/ before the tests.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'engines', 'local', 'sampler-worker.js'), import.meta.url);
const folder = createTinyModelFolder();
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const tools = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];

/** Requests that own different things: parameters, seeds, stop sequences, a JSON constraint, a forced tool, n, top log-probs. */
const requests: GenerateRequest[] = [
  { messages: [{ role: 'user', content: 'Tell me a story about a cat.' }], tools: [], toolChoice: 'auto', sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 2, maxTokens: 30, seed: 1 } },
  { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, toolChoice: { name: 'get_weather' }, sampling: { temperature: 0.8, topP: 0.9, stop: [], n: 1, topLogprobs: 0, maxTokens: 40, seed: 2 } },
  { messages: [{ role: 'user', content: 'JSON please' }], tools: [], toolChoice: 'auto', responseFormat: { type: 'json_object' }, sampling: { temperature: 1, topP: 1, stop: [], n: 2, topLogprobs: 0, maxTokens: 24, seed: 3 } },
  { messages: [{ role: 'system', content: 'Be brief. '.repeat(40) }, { role: 'user', content: 'Count to ten.' }], tools: [], toolChoice: 'auto', sampling: { temperature: 1.2, topP: 1, topK: 30, stop: ['e', 'a'], n: 1, topLogprobs: 0, maxTokens: 20, seed: 4 } },
];



function recorded(result: GenerateResult) {
  return result.choices.map((choice) => ({ tokenIds: choice.responseTokenIds, finishReason: choice.finishReason, content: choice.message.content }));
}

describe('sampler worker: continuous batching', () => {
  it('serves concurrent requests together, each recording what it records alone, and swaps a policy only between them', async () => {
    // Prefix caching off: each request sees the same cache state alone and concurrently.
    const engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl, prefixCacheBytes: 0, batching: { prefillChunkTokens: 64 } });
    try {
      const alone: Timed[] = [];
      for (const request of requests) alone.push(await run(engine, request));
      const together = await Promise.all(requests.map((request) => run(engine, request)));
      together.forEach((timed, index) => {
        const expected = alone[index]?.result as GenerateResult;
        expect(recorded(timed.result)).toEqual(recorded(expected));
        timed.result.choices.forEach((choice, choiceIndex) =>
          choice.logprobs.forEach((logprob, position) => expect(Math.abs(logprob - (expected.choices[choiceIndex]?.logprobs[position] ?? Number.NaN))).toBeLessThan(1e-5)),
        );
      });
      // Together, not one after another: the streams sent after the first had their first tokens before it ended.
      expect(alone[0]?.result.choices[0]?.responseTokenIds.length).toBeGreaterThanOrEqual(20);
      for (const timed of together.slice(1)) expect(timed.firstTokenAt).toBeLessThan(together[0]?.endAt ?? 0);

      // A policy load waits for the running generations, and what comes after it runs on the new version.
      const before = run(engine, requests[0] as GenerateRequest);
      const loaded = engine.loadPolicy({ version: 1, kind: 'adapter', files: createTinyAdapterFiles(folder, 1) });
      const after = run(engine, requests[0] as GenerateRequest);
      await loaded;
      expect((await before).result.policyVersion).toBe(0);
      expect((await after).result.policyVersion).toBe(1);
      expect(recorded((await before).result)).toEqual(recorded(alone[0]?.result as GenerateResult));

      // The base version beside the trained one (a frozen judge) runs from its own view, beside the served batch.
      const [served, base] = await Promise.all([run(engine, requests[0] as GenerateRequest), run(engine, { ...(requests[0] as GenerateRequest), policyVersion: 0 })]);
      expect(served.result.policyVersion).toBe(1);
      expect(recorded(served.result)).toEqual(recorded((await after).result));
      expect(base.result.policyVersion).toBe(0);
      expect(recorded(base.result)).toEqual(recorded(alone[0]?.result as GenerateResult));
      expect(base.firstTokenAt).toBeLessThan(served.endAt);
    } finally {
      await engine.close();
    }
  });
});
