import { beforeAll, describe, expect, test } from 'vitest';
import { initializeTensorBackend, type TensorFlow } from './initialize-tensor-backend.js';
import { applyWasmKernelPatches, patchedWasmKernels } from './wasm-kernel-patches.js';
import { onBothBackends, randomIntegers, randomValues, relativeError } from './testing/on-both-backends.js';

let tf: TensorFlow;

beforeAll(async () => {
  tf = await initializeTensorBackend({ backend: 'wasm' });
});

function backendDataIds(): number {
  return tf.engine().backend.numDataIds();
}

describe('initializeTensorBackend', () => {
  test('is idempotent and registers each patched kernel once', async () => {
    const again = await initializeTensorBackend({ backend: 'wasm' });
    applyWasmKernelPatches();
    expect(again).toBe(tf);
    expect(tf.getBackend()).toBe('wasm');
    for (const kernelName of patchedWasmKernels) {
      expect(tf.getKernelsForBackend('wasm').filter((kernel) => kernel.kernelName === kernelName)).toHaveLength(1);
    }
  });

  test('switches to the cpu backend and back', async () => {
    await initializeTensorBackend({ backend: 'cpu' });
    expect(tf.getBackend()).toBe('cpu');
    await initializeTensorBackend({ backend: 'wasm' });
    expect(tf.getBackend()).toBe('wasm');
  });
});

describe('Identity and same-dtype Cast share the buffer', () => {
  test('clone shares data and survives disposal of the original', async () => {
    await tf.setBackend('wasm');
    const original = tf.tensor([1, 2, 3, 4], [2, 2]);
    const before = backendDataIds();
    const copy = original.clone();
    expect(copy.dataId).toBe(original.dataId);
    expect(backendDataIds()).toBe(before);
    original.dispose();
    expect(Array.from(copy.dataSync())).toEqual([1, 2, 3, 4]);
    copy.dispose();
    expect(backendDataIds()).toBe(before - 1);
  });

  test('same-dtype cast shares data; other casts convert like the cpu backend', async () => {
    await tf.setBackend('wasm');
    const floats = tf.tensor([1.7, -2.2, 0, 3.5]);
    const same = tf.cast(floats, 'float32');
    expect(same.dataId).toBe(floats.dataId);
    tf.dispose([floats, same]);
    const values = Float32Array.from([1.7, -2.2, 0, 3.5, -0.5]);
    const { cpu, wasm } = await onBothBackends(tf, () => [
      tf.cast(tf.cast(tf.tensor(values), 'int32'), 'float32'),
      tf.cast(tf.cast(tf.tensor(values), 'bool'), 'float32'),
    ]);
    expect(wasm).toEqual(cpu);
  });

  test('saved-for-backward tensors no longer cost a copy', async () => {
    await tf.setBackend('wasm');
    const x = tf.tensor(randomValues(8 * 8, 3), [8, 8]);
    const w = tf.tensor(randomValues(8 * 8, 4), [8, 8]);
    let buffersAdded = -1;
    const grads = tf.grads((a, b) => {
      const before = backendDataIds();
      const product = tf.matMul(a, b);
      // The tape clones a and b; with shared buffers only the product is new.
      buffersAdded = backendDataIds() - before;
      return tf.sum(product);
    })([x, w]);
    expect(buffersAdded).toBe(1);
    tf.dispose([...grads, x, w]);
  });
});

describe('OneHot on wasm', () => {
  test('honours dtype, on/off values and out-of-range indices like the cpu backend', async () => {
    const indices = Int32Array.from([0, 3, -1, 2, 7]);
    const { cpu, wasm } = await onBothBackends(tf, () => [
      tf.oneHot(tf.tensor1d(indices, 'int32'), 4, 1, 0, 'float32'),
      tf.oneHot(tf.tensor1d(indices, 'int32'), 4, 2.5, -1, 'float32'),
      tf.cast(tf.oneHot(tf.tensor(indices, [5, 1], 'int32'), 3), 'float32'),
    ]);
    expect(wasm).toEqual(cpu);
  });
});

describe('GatherV2 on wasm', () => {
  test('row gathers (float and int, 1-D and 2-D indices, repeats) and every other gather match the cpu backend', async () => {
    const table = randomValues(10 * 3 * 2, 31);
    const integers = Float32Array.from(randomIntegers(10 * 3, 32, 90));
    const { cpu, wasm } = await onBothBackends(tf, () => [
      tf.gather(tf.tensor(table, [10, 6]), tf.tensor1d([3, 0, 9, 3], 'int32')),
      tf.gather(tf.tensor(table, [10, 3, 2]), tf.tensor2d([[1, 2], [2, 8]], [2, 2], 'int32')),
      tf.cast(tf.gather(tf.tensor(integers, [10, 3], 'int32'), tf.tensor1d([4, 4, 0], 'int32')), 'float32'),
      tf.gather(tf.tensor1d(table.slice(0, 10)), tf.tensor1d([9, 1], 'int32')),
      tf.gather(tf.tensor(table, [10, 6]), tf.tensor1d([5, 0], 'int32'), 1),
      tf.gather(tf.tensor(table, [10, 6]), tf.tensor1d([2, 3], 'int32'), -2),
      tf.gather(tf.tensor(table, [10, 6]), tf.tensor1d([], 'int32')),
    ]);
    expect(wasm).toEqual(cpu);
  });

  test('an index out of range fails as on the stock kernel', async () => {
    await tf.setBackend('wasm');
    const table = tf.tensor(randomValues(4 * 2, 33), [4, 2]);
    expect(() => tf.gather(table, tf.tensor1d([1, 4], 'int32'))).toThrow(/index value 4 is not in \[0, 3\]/);
    table.dispose();
  });
});

describe('UnsortedSegmentSum on wasm', () => {
  test('matches the cpu backend for float and int inputs, dropping out-of-range ids', async () => {
    const floats = randomValues(6 * 4, 11);
    const integers = Float32Array.from(randomIntegers(6 * 4, 12, 50));
    const ids = Int32Array.from([0, 2, 2, -1, 4, 9]);
    const { cpu, wasm } = await onBothBackends(tf, () => [
      tf.unsortedSegmentSum(tf.tensor(floats, [6, 4]), tf.tensor1d(ids, 'int32'), 5),
      tf.unsortedSegmentSum(tf.tensor(integers, [6, 2, 2], 'int32'), tf.tensor1d(ids, 'int32'), 5),
    ]);
    expect(relativeError(wasm[0] as Float32Array, cpu[0] as Float32Array)).toBeLessThan(1e-6);
    expect(wasm[1]).toEqual(cpu[1]);
  });

  test('gives tf.gather a gradient equal to the cpu backend', async () => {
    const table = randomValues(10 * 3, 21);
    const indices = Int32Array.from([1, 7, 1, 0, 9, 7, 7]);
    const weights = randomValues(7 * 3, 22);
    const { cpu, wasm } = await onBothBackends(tf, () => {
      const embedding = tf.tensor(table, [10, 3]);
      const gradient = tf.grad((e) => tf.sum(tf.mul(tf.gather(e, tf.tensor1d(indices, 'int32')), tf.tensor(weights, [7, 3]))));
      return gradient(embedding);
    });
    expect(relativeError(wasm[0] as Float32Array, cpu[0] as Float32Array)).toBeLessThan(1e-6);
  });
});
