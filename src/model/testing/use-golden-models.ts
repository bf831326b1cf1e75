import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { initializeTensorBackend } from '../../tensor/index.js';
import type { Transformer } from '../transformer.js';

/** The golden fixtures' folder (`scripts/golden/make-golden-fixtures.py`). */
export const goldenFixtures = join(import.meta.dirname, '..', '__fixtures__', 'golden');

/**
 * Loads the Llama and Qwen3 golden models once for a test file (wasm backend) and disposes them after it;
 * returns the lookup by name.
 */
export function useGoldenModels(load: (folder: string, name: string) => Promise<Transformer>): (name: string) => Transformer {
  const models: Record<string, Transformer> = {};
  beforeAll(async () => {
    await initializeTensorBackend({ backend: 'wasm' });
    for (const name of ['llama', 'qwen3']) models[name] = await load(join(goldenFixtures, name), name);
  });
  afterAll(() => {
    for (const transformer of Object.values(models)) transformer.dispose();
  });
  return (name) => {
    const transformer = models[name];
    if (transformer === undefined) throw new Error(`model ${name} not loaded`);
    return transformer;
  };
}
