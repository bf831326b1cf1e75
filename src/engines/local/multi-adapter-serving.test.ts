import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, InferenceEngine, PolicyArtifact } from '../../spec/inference-engine.js';
import { createLocalInferenceEngine } from './create-local-inference-engine.js';
import { runTimed as run, type TimedGeneration } from './testing/run-timed.js';
import { createTinyAdapterFiles, createTinyModelFolder } from './testing/create-tiny-model-folder.js';

// Worker threads run compiled JavaScript: the suite builds dist/ before the tests.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'engines', 'local', 'sampler-worker.js'), import.meta.url);
const folder = createTinyModelFolder();
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Versions 1..8 are adapters of their own seeds; the source counts what the engine fetched. */
function adapterSource() {
  const fetched: number[] = [];
  const artifacts = new Map<number, PolicyArtifact>(
    Array.from({ length: 8 }, (_, index) => [index + 1, { version: index + 1, kind: 'adapter', files: createTinyAdapterFiles(folder, 100 + index) }]),
  );
  return {
    fetched,
    source: async (version: number) => {
      fetched.push(version);
      return artifacts.get(version) ?? null;
    },
  };
}

function request(version: number | undefined, seed: number): GenerateRequest {
  return {
    messages: [{ role: 'user', content: `Tell me story number ${seed}.` }],
    tools: [],
    toolChoice: 'auto',
    sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: 16 + 3 * seed, seed },
    ...(version === undefined ? {} : { policyVersion: version }),
  };
}


function expectSame(actual: GenerateResult, expected: GenerateResult): void {
  expect(actual.policyVersion).toBe(expected.policyVersion);
  const [choice, alone] = [actual.choices[0], expected.choices[0]];
  expect(choice?.responseTokenIds).toEqual(alone?.responseTokenIds);
  choice?.logprobs.forEach((logprob, position) => expect(Math.abs(logprob - (alone?.logprobs[position] ?? Number.NaN))).toBeLessThan(1e-4));
}

describe('local engine: many adapters served at once', () => {
  it('serves requests of different versions together, each as it is served alone, loading cold adapters from the source', async () => {
    const { fetched, source } = adapterSource();
    const engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl, prefixCacheBytes: 0, maxResidentAdapters: 8 });
    engine.setPolicyArtifactSource?.(source);
    try {
      const requests = [request(0, 1), request(1, 2), request(2, 3), request(3, 4), request(undefined, 5), request(2, 6)];
      const alone: TimedGeneration[] = [];
      for (const generateRequest of requests) alone.push(await run(engine, generateRequest));
      // Different adapters sample different replies to the same request.
      const sameRequest = await Promise.all([0, 1, 2].map((version) => run(engine, request(version, 9))));
      expect(new Set(sameRequest.map((timed) => timed.result.choices[0]?.responseTokenIds.join(','))).size).toBe(3);
      const together = await Promise.all(requests.map((generateRequest) => run(engine, generateRequest)));
      together.forEach((timed, index) => expectSame(timed.result, alone[index]?.result as GenerateResult));
      // In one batch, not one version after another: every stream had its first token before the first ended.
      for (const timed of together.slice(1)) expect(timed.firstTokenAt).toBeLessThan(together[0]?.endAt ?? 0);
      // Each adapter was fetched once: all stayed resident.
      expect(fetched).toEqual([1, 2, 3]);
      await expect(run(engine, request(42, 1))).rejects.toMatchObject({ code: 'not_found' });
    } finally {
      await engine.close();
    }
  });

  it('holds at most --max-resident-adapters, evicting the least recently used, and never fails a request for lack of room', async () => {
    const { fetched, source } = adapterSource();
    const engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl, prefixCacheBytes: 0, maxResidentAdapters: 3 });
    engine.setPolicyArtifactSource?.(source);
    try {
      const alone = new Map<number, GenerateResult>();
      for (let version = 1; version <= 8; version += 1) alone.set(version, (await run(engine, request(version, version))).result);
      // Eight versions through three slots, all at once: each waits for a slot and none fails.
      const together = await Promise.all(Array.from({ length: 8 }, (_, index) => run(engine, request(index + 1, index + 1))));
      together.forEach((timed, index) => expectSame(timed.result, alone.get(index + 1) as GenerateResult));
      expect(fetched.length).toBeGreaterThan(8);

      // The active version and a pinned one stay resident however many others pass through.
      await engine.loadPolicy({ version: 1, kind: 'adapter', files: createTinyAdapterFiles(folder, 100) });
      await engine.pinPolicy?.(2);
      await expect(engine.pinPolicy?.(3)).rejects.toMatchObject({ code: 'unsupported' });
      fetched.length = 0;
      for (const version of [4, 5, 6, 7, 8, 4]) await run(engine, request(version, version));
      const [active, pinned] = await Promise.all([run(engine, request(undefined, 1)), run(engine, request(2, 2))]);
      expectSame(active.result, alone.get(1) as GenerateResult);
      expectSame(pinned.result, alone.get(2) as GenerateResult);
      expect(fetched).not.toContain(1);
      expect(fetched).not.toContain(2);
      // Unpinned, it is the least recently used and makes room.
      await engine.unpinPolicy?.(2);
      for (const version of [4, 5]) await run(engine, request(version, version));
      fetched.length = 0;
      await run(engine, request(2, 2));
      expect(fetched).toEqual([2]);
    } finally {
      await engine.close();
    }
  });

  it('serves a full-weights version named by a request beside adapter versions, alone, as before', async () => {
    const { source } = adapterSource();
    // The full-weights version: other weights of the same shape, served alone by an engine of their own for comparison.
    const otherFolder = createTinyModelFolder({ seed: 11 });
    const engine = await createLocalInferenceEngine({ modelDirectory: folder, modelId: 'tiny', workerUrl, prefixCacheBytes: 0 });
    const full = await createLocalInferenceEngine({ modelDirectory: otherFolder, modelId: 'tiny', workerUrl, prefixCacheBytes: 0 });
    try {
      const fullArtifact: PolicyArtifact = { version: 9, kind: 'full', files: { 'model.safetensors': readFileSync(path.join(otherFolder, 'model.safetensors')) } };
      engine.setPolicyArtifactSource?.(async (version) => (version === 9 ? fullArtifact : source(version)));
      const expected = (await run(full, request(undefined, 3))).result;
      const [adapter, fullWeights] = await Promise.all([run(engine, request(1, 3)), run(engine, request(9, 3))]);
      expect(fullWeights.result.choices[0]?.responseTokenIds).toEqual(expected.choices[0]?.responseTokenIds);
      expect(fullWeights.result.policyVersion).toBe(9);
      expect(adapter.result.policyVersion).toBe(1);
    } finally {
      await Promise.all([engine.close(), full.close()]);
      rmSync(otherFolder, { recursive: true, force: true });
    }
  });
});
