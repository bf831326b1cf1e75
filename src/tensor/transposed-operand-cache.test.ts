import { beforeAll, describe, expect, test } from 'vitest';
import { initializeTensorBackend, type TensorFlow } from './initialize-tensor-backend.js';
import { transposedOperandCache } from './transposed-operand-cache.js';
import { wasmInternals } from './wasm-backend-internals.js';
import { wasmMemoryUsage } from './wasm-memory.js';
import { onBothBackends, randomValues, relativeError } from './testing/on-both-backends.js';

let tf: TensorFlow;

beforeAll(async () => {
  tf = await initializeTensorBackend({ backend: 'wasm' });
});

const cacheBytes = () => transposedOperandCache(wasmInternals(tf.backend())).bytes;

describe('transposed copies of recurring matmul right-hand sides', () => {
  test('x·Wᵀ with a recurring W equals the cpu backend on every call, the ones through the kept copy included', async () => {
    const { cpu, wasm } = await onBothBackends(tf, () => {
      const weight = tf.tensor2d(randomValues(12 * 9, 3), [12, 9]);
      // Five calls: the first sees W, the second copies it, the later ones read the copy; the
      // inputs differ so that a stale or wrong copy shows.
      return [0, 1, 2, 3, 4].flatMap((call) => {
        const x = tf.tensor2d(randomValues(5 * 9, 10 + call), [5, 9]);
        const dy = tf.tensor2d(randomValues(9 * 12, 20 + call), [9, 12]);
        return [tf.matMul(x, weight, false, true), tf.matMul(dy, weight, true, true)];
      });
    });
    wasm.forEach((values, index) => expect(relativeError(values, cpu[index]!), `product ${index}`).toBeLessThan(1e-5));
  });

  test('a copy is made on the second transposed use and freed with its source', () => {
    const x = tf.tensor2d(randomValues(8 * 32, 5), [8, 32]);
    tf.matMul(x, x, false, true).dispose();
    const heapBefore = wasmMemoryUsage()?.allocatedBytes;
    const weight = tf.tensor2d(randomValues(64 * 32, 4), [64, 32]);
    const before = cacheBytes();
    tf.matMul(x, weight, false, true).dispose();
    expect(cacheBytes()).toBe(before);
    tf.matMul(x, weight, false, true).dispose();
    expect(cacheBytes()).toBe(before + 64 * 32 * 4);
    tf.matMul(x, weight, false, true).dispose();
    expect(cacheBytes()).toBe(before + 64 * 32 * 4);
    weight.dispose();
    expect(cacheBytes()).toBe(before);
    expect(wasmMemoryUsage()?.allocatedBytes).toBe(heapBefore);
    x.dispose();
  });

  test('a right-hand side used once (an activation) is never copied', () => {
    const before = cacheBytes();
    const x = tf.tensor2d(randomValues(8 * 32, 6), [8, 32]);
    for (let call = 0; call < 4; call++) {
      const activation = tf.tensor2d(randomValues(16 * 32, 30 + call), [16, 32]);
      tf.matMul(x, activation, false, true).dispose();
      activation.dispose();
    }
    expect(cacheBytes()).toBe(before);
    x.dispose();
  });
});
