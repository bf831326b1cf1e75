/**
 * Fresh random weights for a transformer shape, under their Hugging Face names: the starting point
 * of pre-training from scratch and of test models. Linear and embedding weights are normal with a
 * small standard deviation (as HF's `initializer_range`), norm weights are one, biases zero.
 * Random LoRA adapters likewise (`createRandomAdapterFiles`).
 */
import * as tf from '@tensorflow/tfjs';
import { createSeededRandom } from '../core/seeded-random.js';
import { createLoraAdapter, exportPeftAdapter } from './lora-adapter.js';
import type { LoraOptions } from './lora-adapter.js';
import type { FloatTensorData } from './safetensors.js';
import { expectedTensorShapes } from './transformer-parameters.js';
import type { TransformerShape } from './transformer-shape.js';

export function createRandomWeights(shape: TransformerShape, options: { seed: number; standardDeviation?: number }): Map<string, FloatTensorData> {
  const random = createSeededRandom(options.seed);
  const deviation = options.standardDeviation ?? 0.02;
  const weights = new Map<string, FloatTensorData>();
  for (const [name, dimensions] of expectedTensorShapes(shape)) {
    const data = new Float32Array(dimensions.reduce((product, size) => product * size, 1));
    if (name.endsWith('norm.weight')) data.fill(1);
    else if (!name.endsWith('.bias')) for (let index = 0; index < data.length; index += 1) data[index] = random.nextNormal() * deviation;
    weights.set(name, { shape: dimensions, data });
  }
  return weights;
}

export interface RandomAdapterOptions extends LoraOptions {
  seed: number;
  /** Standard deviation of B's entries (A is PEFT's kaiming-uniform); default 0.02. */
  standardDeviation?: number;
  baseModelNameOrPath: string;
}

/**
 * A PEFT adapter folder's files with random A and B, so it changes the model (a fresh adapter's
 * B is zero): what tests and `clawrl bench serving --adapters` serve as many distinct policy versions.
 */
export async function createRandomAdapterFiles(shape: TransformerShape, options: RandomAdapterOptions): Promise<Record<string, Uint8Array>> {
  const adapter = createLoraAdapter(shape, { rank: options.rank, alpha: options.alpha, targetModules: options.targetModules }, options.seed);
  const random = createSeededRandom(options.seed + 1);
  const deviation = options.standardDeviation ?? 0.02;
  try {
    for (const module of adapter.modules.values()) {
      const values = new Float32Array(module.b.size);
      for (let index = 0; index < values.length; index += 1) values[index] = random.nextNormal() * deviation;
      const next = tf.tensor2d(values, [module.b.shape[0] ?? 0, module.b.shape[1] ?? 0]);
      module.b.assign(next);
      next.dispose();
    }
    return await exportPeftAdapter(adapter, { baseModelNameOrPath: options.baseModelNameOrPath });
  } finally {
    adapter.dispose();
  }
}
