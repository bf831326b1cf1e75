import { beforeAll, describe, expect, test } from 'vitest';
import { initializeTensorBackend, type TensorFlow } from './initialize-tensor-backend.js';
import { logSoftmax, logSumExp, rmsNorm, swiglu } from './operations.js';
import { onBothBackends, randomValues, relativeError } from './testing/on-both-backends.js';

let tf: TensorFlow;

beforeAll(async () => {
  tf = await initializeTensorBackend({ backend: 'wasm' });
});

describe('logSumExp', () => {
  const shape = [3, 4, 33];
  // Offsets of ±80 would overflow exp() without the max shift.
  const values = randomValues(3 * 4 * 33, 5, 80);
  const weights = randomValues(3 * 4, 6);

  test('values and gradient on wasm match tf.logSumExp on cpu', async () => {
    const { cpu, wasm } = await onBothBackends(tf, (backend) => {
      const x = tf.tensor(values, shape);
      const w = tf.tensor(weights, [3, 4]);
      const reference = (input: typeof x) => tf.logSumExp(input, -1);
      const subject = backend === 'cpu' ? reference : (input: typeof x) => logSumExp(input);
      const value = subject(x);
      const [gradient] = tf.grads((input) => tf.sum(tf.mul(subject(input), w)))([x]);
      return [value, gradient as typeof x];
    });
    expect(relativeError(wasm[0] as Float32Array, cpu[0] as Float32Array)).toBeLessThan(1e-5);
    expect(relativeError(wasm[1] as Float32Array, cpu[1] as Float32Array)).toBeLessThan(1e-5);
  });

  test('keepDims keeps a size-1 last axis, and logSoftmax rows normalise', async () => {
    await tf.setBackend('wasm');
    const x = tf.tensor(values, shape);
    const kept = logSumExp(x, { keepDims: true });
    expect(kept.shape).toEqual([3, 4, 1]);
    const sums = tf.tidy(() => tf.sum(tf.exp(logSoftmax(x)), -1));
    for (const sum of sums.dataSync()) expect(Math.abs(sum - 1)).toBeLessThan(1e-5);
    tf.dispose([x, kept, sums]);
  });
});

describe('rmsNorm and swiglu', () => {
  test('match their definitions, gradients included, across backends', async () => {
    const x = randomValues(5 * 8, 31, 3);
    const weight = randomValues(8, 32);
    const gate = randomValues(5 * 8, 33, 4);
    const { cpu, wasm } = await onBothBackends(tf, (backend) => {
      const xTensor = tf.tensor(x, [5, 8]);
      const weightTensor = tf.tensor(weight, [8]);
      const gateTensor = tf.tensor(gate, [5, 8]);
      if (backend === 'cpu') {
        // Reference written out independently of the helpers.
        const rms = tf.sqrt(tf.add(tf.div(tf.sum(tf.mul(xTensor, xTensor), -1, true), 8), 1e-6));
        const normalised = tf.mul(tf.div(xTensor, rms), weightTensor);
        const silu = tf.div(gateTensor, tf.add(1, tf.exp(tf.neg(gateTensor))));
        const activated = tf.mul(silu, xTensor);
        const gradients = tf.grads((a, b) =>
          tf.add(
            tf.sum(tf.mul(tf.div(a, tf.sqrt(tf.add(tf.div(tf.sum(tf.mul(a, a), -1, true), 8), 1e-6))), b)),
            tf.sum(tf.mul(tf.div(b, tf.add(1, tf.exp(tf.neg(b)))), a)),
          ),
        )([xTensor, gateTensor]);
        return [normalised, activated, ...gradients];
      }
      const gradients = tf.grads((a, b) => tf.add(tf.sum(rmsNorm(a, b)), tf.sum(swiglu(b, a))))([xTensor, gateTensor]);
      return [rmsNorm(xTensor, weightTensor), swiglu(gateTensor, xTensor), ...gradients];
    });
    for (let index = 0; index < 4; index++) {
      expect(relativeError(wasm[index] as Float32Array, cpu[index] as Float32Array), `output ${index}`).toBeLessThan(1e-5);
    }
  });
});
