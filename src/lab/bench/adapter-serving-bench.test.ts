import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalInferenceEngine } from '../../engines/local/create-local-inference-engine.js';
import { runAdapterServingBench } from './adapter-serving-bench.js';

const root = path.join(import.meta.dirname, '..', '..', '..');
const modelDirectory = path.join(root, 'models', 'builtin-tiny');
// Worker threads run compiled JavaScript: the suite builds dist/ before the tests.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'engines', 'local', 'sampler-worker.js'), import.meta.url);

describe('runAdapterServingBench', () => {
  it('measures the base and many adapters at concurrency 8, concurrency 1, and cold and resident first tokens, on the built-in model', async () => {
    const versionsAsked = new Set<number>();
    const result = await runAdapterServingBench({
      modelDirectory,
      adapters: 12,
      repeats: 1,
      requestsPerFigure: 8,
      createEngine: async () => {
        const engine = await createLocalInferenceEngine({ modelDirectory, modelId: 'builtin:tiny', fitPrompts: true, workerUrl, maxResidentAdapters: 9 });
        // Watch which versions the bench makes it load.
        return {
          ...engine,
          generate: (request, signal) => {
            if (request.policyVersion !== undefined) versionsAsked.add(request.policyVersion);
            return engine.generate(request, signal);
          },
          setPolicyArtifactSource: (source) => engine.setPolicyArtifactSource?.(source),
          close: () => engine.close(),
        };
      },
    });
    for (const figure of Object.values(result.tokensPerSecond)) {
      expect(figure.repeats).toHaveLength(1);
      expect(figure.median).toBeGreaterThan(0);
    }
    expect(Object.values(result.completionTokensPerFigure).every((tokens) => (tokens[0] ?? 0) > 0)).toBe(true);
    expect(result.ratios.eightAdaptersOverBase.median).toBeGreaterThan(0);
    expect(result.firstTokenMs.coldIdle.median).toBeGreaterThan(0);
    // The base, the 8 adapters of the 8-stream figure, and cold ones beyond them.
    expect(versionsAsked.has(0)).toBe(true);
    expect([1, 2, 3, 4, 5, 6, 7, 8].every((version) => versionsAsked.has(version))).toBe(true);
    expect([...versionsAsked].some((version) => version > 9)).toBe(true);
  }, 300_000);
});
