import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initializeTensorBackend } from '../tensor/index.js';
import { createAdamW } from './adamw.js';

beforeAll(async () => {
  await initializeTensorBackend({ backend: 'cpu' });
});

/** PyTorch's AdamW for one scalar parameter, written out. */
function referenceAdamW(start: number, gradients: number[], options: { lr: number; beta1: number; beta2: number; epsilon: number; decay: number }): number {
  let parameter = start;
  let first = 0;
  let second = 0;
  gradients.forEach((gradient, index) => {
    const step = index + 1;
    parameter *= 1 - options.lr * options.decay;
    first = options.beta1 * first + (1 - options.beta1) * gradient;
    second = options.beta2 * second + (1 - options.beta2) * gradient * gradient;
    const corrected = first / (1 - options.beta1 ** step);
    const correctedSecond = second / (1 - options.beta2 ** step);
    parameter -= (options.lr * corrected) / (Math.sqrt(correctedSecond) + options.epsilon);
  });
  return parameter;
}

describe('createAdamW', () => {
  it('matches the PyTorch AdamW update with decoupled weight decay', () => {
    const options = { lr: 0.1, beta1: 0.8, beta2: 0.9, epsilon: 1e-6, decay: 0.5 };
    const adamW = createAdamW({ learningRate: options.lr, beta1: options.beta1, beta2: options.beta2, epsilon: options.epsilon, weightDecay: options.decay });
    const parameter = tf.variable(tf.tensor1d([1, -2]));
    const gradientSteps = [
      [0.5, 3],
      [-0.25, 1],
      [1, -4],
    ];
    for (const values of gradientSteps) {
      const gradient = tf.tensor1d(values);
      adamW.step(new Map([['p', parameter]]), new Map([['p', gradient]]));
      gradient.dispose();
    }
    const result = Array.from(parameter.dataSync());
    expect(result[0]).toBeCloseTo(referenceAdamW(1, gradientSteps.map((step) => step[0] ?? 0), options), 5);
    expect(result[1]).toBeCloseTo(referenceAdamW(-2, gradientSteps.map((step) => step[1] ?? 0), options), 5);
    expect(adamW.stepCount).toBe(3);
    adamW.dispose();
    parameter.dispose();
  });

  it('clips the global gradient norm and reports it unclipped', () => {
    // Adam is scale-invariant except through epsilon, so a large epsilon makes the clip visible:
    // with beta 0 the step is -g/(|g| + epsilon) elementwise.
    const adamW = createAdamW({ learningRate: 1, beta1: 0, beta2: 0, epsilon: 1, maxGradientNorm: 1 });
    const parameter = tf.variable(tf.tensor1d([0, 0]));
    const gradient = tf.tensor1d([3, 4]);
    const { gradientNorm } = adamW.step(new Map([['p', parameter]]), new Map([['p', gradient]]));
    expect(gradientNorm).toBeCloseTo(5, 5);
    const [first = 0, second = 0] = Array.from(parameter.dataSync());
    expect(first).toBeCloseTo(-0.6 / 1.6, 5);
    expect(second).toBeCloseTo(-0.8 / 1.8, 5);
    adamW.dispose();
    tf.dispose([parameter, gradient]);
  });
});

describe('AdamW state export and import', () => {
  it('resumes to exactly the parameters of an uninterrupted run', async () => {
    const steps = [[0.5, 3], [-0.25, 1], [1, -4], [0.1, 0.2]];
    const run = async (splitAt: number | null): Promise<number[]> => {
      let adamW = createAdamW({ learningRate: 0.1, weightDecay: 0.1 });
      const parameter = tf.variable(tf.tensor1d([1, -2]));
      for (const [index, values] of steps.entries()) {
        if (index === splitAt) {
          const state = await adamW.exportState();
          adamW.dispose();
          adamW = createAdamW({ learningRate: 0.1, weightDecay: 0.1 });
          adamW.importState(state);
          expect(adamW.stepCount).toBe(splitAt);
        }
        const gradient = tf.tensor1d(values);
        adamW.step(new Map([['p', parameter]]), new Map([['p', gradient]]));
        gradient.dispose();
      }
      const result = Array.from(await parameter.data());
      adamW.dispose();
      parameter.dispose();
      return result;
    };
    expect(await run(2)).toEqual(await run(null));
  });
});
