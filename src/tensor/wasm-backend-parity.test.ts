import { beforeAll, describe, expect, test } from 'vitest';
import type { Tensor } from '@tensorflow/tfjs';
import { initializeTensorBackend, type TensorFlow } from './initialize-tensor-backend.js';
import { onBothBackends, randomValues, relativeError } from './testing/on-both-backends.js';

/*
 * The stock wasm backend has silently wrong kernels (Cast to bool and float OneHot were two, now
 * patched). This sweep runs the ops a Llama-family model uses, forward and backward, on both
 * backends, so that another such bug shows up here rather than as a model that does not learn.
 */

let tf: TensorFlow;

beforeAll(async () => {
  tf = await initializeTensorBackend({ backend: 'wasm' });
});

const x = randomValues(2 * 3 * 4 * 6, 61, 2);
const y = randomValues(2 * 3 * 4 * 6, 62, 2);
const shape = [2, 3, 4, 6];

type Operation = (a: Tensor, b: Tensor) => Tensor;

const operations: Record<string, Operation> = {
  'add broadcast': (a, b) => tf.add(a, tf.slice(b, [0, 0, 0, 0], [1, 1, 4, 6])),
  'sub mul div': (a, b) => tf.div(tf.mul(tf.sub(a, b), a), tf.add(tf.abs(b), 1)),
  'exp log sqrt rsqrt': (a) => tf.add(tf.log(tf.add(tf.exp(a), 1)), tf.rsqrt(tf.add(tf.sqrt(tf.abs(a)), 1))),
  'sigmoid neg square pow': (a) => tf.add(tf.sigmoid(tf.neg(a)), tf.pow(tf.square(a), 1.5)),
  'sin cos (RoPE)': (a, b) => tf.add(tf.mul(a, tf.cos(b)), tf.mul(tf.reverse(a, -1), tf.sin(b))),
  'sum mean max over axes': (a) => tf.concat([tf.sum(a, -1).flatten(), tf.mean(a, 1).flatten(), tf.max(a, -1).flatten()]),
  'softmax logSoftmax': (a) => tf.add(tf.softmax(a), tf.logSoftmax(a)),
  'concat slice': (a, b) => tf.concat([tf.slice(a, [0, 0, 1, 0], [-1, -1, 2, -1]), tf.slice(b, [0, 1, 0, 2], [-1, 2, -1, 3]).tile([1, 1, 1, 2]).slice([0, 0, 0, 0], [-1, 2, -1, -1]).pad([[0, 0], [0, 1], [0, 0], [0, 0]])], 2),
  'transpose 4-D and reshape': (a) => tf.reshape(tf.transpose(a, [0, 2, 1, 3]), [2, 4, 18]),
  'gather axis 0 and 1': (a) => tf.concat([tf.gather(a, tf.tensor1d([1, 0, 1], 'int32'), 0).flatten(), tf.gather(a, tf.tensor1d([2, 2, 0], 'int32'), 1).flatten()]),
  // The condition comes from fresh tensors: comparisons have no gradient in tfjs.
  'where greater minimum maximum clip': (a, b) =>
    tf.where(tf.greater(tf.tensor(x, shape), tf.tensor(y, shape)), tf.minimum(a, 0.5), tf.clipByValue(tf.maximum(b, -0.5), -1, 1)),
  'causal bandPart mask': (a) => tf.add(tf.reshape(a, [12, 12]), tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([12, 12]), -1, 0)), -1e9)),
  'stack unstack split pad': (a) => tf.pad(tf.concat(tf.split(tf.stack(tf.unstack(a, 1), 0), 2, 3), 0), [[1, 0], [0, 0], [0, 2], [0, 1]]),
  'expandDims squeeze cumsum': (a) => tf.squeeze(tf.cumsum(tf.expandDims(a, 0), 4), [0]),
  'batched attention': (a, b) => tf.matMul(tf.softmax(tf.matMul(a, b, false, true)), b),
};

describe('wasm backend matches cpu on transformer ops', () => {
  for (const [name, operation] of Object.entries(operations)) {
    test(`${name}: values and gradients`, async () => {
      const { cpu, wasm } = await onBothBackends(tf, () => {
        const a = tf.tensor(x, shape);
        const b = tf.tensor(y, shape);
        const value = operation(a, b);
        const weights = tf.tensor(randomValues(value.size, 63), value.shape);
        // Differentiate only w.r.t. the inputs the operation uses (its arity).
        const inputs = operation.length === 1 ? [a] : [a, b];
        const gradients = tf.grads((first, second) => tf.sum(tf.mul(operation(first, second ?? b), weights)))(inputs);
        return [value, ...gradients];
      });
      expect(cpu).toHaveLength(wasm.length);
      cpu.forEach((expected, index) => {
        expect(relativeError(wasm[index] as Float32Array, expected), `${name} output ${index}`).toBeLessThan(1e-5);
      });
    });
  }

  test('integer ops: argMax, topk, range, comparisons', async () => {
    const { cpu, wasm } = await onBothBackends(tf, () => {
      const a = tf.tensor(x, [8, 18]);
      const { values, indices } = tf.topk(a, 3);
      return [
        tf.cast(tf.argMax(a, -1), 'float32'),
        values,
        tf.cast(indices, 'float32'),
        tf.cast(tf.range(0, 10, 3, 'int32'), 'float32'),
        tf.cast(tf.logicalAnd(tf.greaterEqual(a, 0), tf.lessEqual(a, 1)), 'float32'),
        tf.stridedSlice(a, [0, 1], [8, 18], [2, 3]),
      ];
    });
    expect(wasm).toEqual(cpu);
  });
});
