/**
 * Fresh random weights for a transformer shape, under their Hugging Face names: the starting point
 * of pre-training from scratch and of test models. Linear and embedding weights are normal with a
 * small standard deviation (as HF's `initializer_range`), norm weights are one, biases zero.
 */
import { createSeededRandom } from '../core/seeded-random.js';
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
