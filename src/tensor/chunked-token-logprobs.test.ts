import { beforeAll, describe, expect, test } from 'vitest';
import type { Tensor } from '@tensorflow/tfjs';
import { ClawrlError } from '../spec/clawrl-error.js';
import { chunkedTokenLogprobs } from './chunked-token-logprobs.js';
import { initializeTensorBackend, type TensorFlow } from './initialize-tensor-backend.js';
import { onBothBackends, randomIntegers, randomValues, relativeError } from './testing/on-both-backends.js';
import { wasmMemoryUsage } from './wasm-memory.js';

let tf: TensorFlow;

beforeAll(async () => {
  tf = await initializeTensorBackend({ backend: 'wasm' });
});

const rows = 10;
const width = 12;
const vocabulary = 37;
const hiddenValues = randomValues(rows * width, 41, 2);
const headValues = randomValues(vocabulary * width, 42);
const targetValues = randomIntegers(rows, 43, vocabulary);
const lossWeights = randomValues(rows, 44);

/** Full-logits reference: log_softmax(h·Wᵀ)[target], written without any helper under test. */
function referenceLogprobs(hidden: Tensor, head: Tensor, targets: Tensor): Tensor {
  const logits = tf.matMul(hidden, head, false, true);
  const logSoftmax = tf.sub(logits, tf.logSumExp(logits, -1, true));
  return tf.sum(tf.mul(logSoftmax, tf.oneHot(targets, vocabulary, 1, 0, 'float32')), -1);
}

describe('chunkedTokenLogprobs', () => {
  for (const chunkSize of [3, 4, 64]) {
    test(`values and gradients (hidden and lm-head) match full logits on cpu, chunk ${chunkSize}`, async () => {
      const { cpu, wasm } = await onBothBackends(tf, (backend) => {
        const hidden = tf.tensor(hiddenValues, [rows, width]);
        const head = tf.tensor(headValues, [vocabulary, width]);
        const targets = tf.tensor1d(targetValues, 'int32');
        const weights = tf.tensor(lossWeights, [rows]);
        const logprobs = (h: Tensor, w: Tensor): Tensor =>
          backend === 'cpu'
            ? referenceLogprobs(h, w, targets)
            : chunkedTokenLogprobs(h, w, targets, { chunkSize, lmHeadGradient: true }).logprobs;
        const gradients = tf.grads((h, w) => tf.sum(tf.mul(logprobs(h, w), weights)))([hidden, head]);
        return [logprobs(hidden, head), ...gradients];
      });
      expect(relativeError(wasm[0] as Float32Array, cpu[0] as Float32Array), 'logprobs').toBeLessThan(1e-5);
      expect(relativeError(wasm[1] as Float32Array, cpu[1] as Float32Array), 'd hidden').toBeLessThan(1e-5);
      expect(relativeError(wasm[2] as Float32Array, cpu[2] as Float32Array), 'd lm-head').toBeLessThan(1e-5);
    });
  }

  test('batched hidden [B,T,d] keeps the leading shape', async () => {
    await tf.setBackend('wasm');
    const result = tf.tidy(() => {
      const hidden = tf.tensor(hiddenValues, [2, 5, width]);
      const targets = tf.tensor(targetValues, [2, 5], 'int32');
      const batched = chunkedTokenLogprobs(hidden, tf.tensor(headValues, [vocabulary, width]), targets).logprobs;
      const flat = referenceLogprobs(tf.reshape(hidden, [rows, width]), tf.tensor(headValues, [vocabulary, width]), tf.reshape(targets, [rows]));
      return [batched, flat];
    });
    expect(result[0]?.shape).toEqual([2, 5]);
    expect(relativeError(result[0]?.dataSync() as Float32Array, result[1]?.dataSync() as Float32Array)).toBeLessThan(1e-5);
    tf.dispose(result);
  });

  test('a trainable Variable lm-head gets a gradient by default, a frozen one does not', async () => {
    await tf.setBackend('wasm');
    const head = tf.variable(tf.tensor(headValues, [vocabulary, width]), true, 'test-head');
    const projection = tf.variable(tf.tensor(randomValues(width * width, 45), [width, width]), true, 'test-projection');
    const hidden = tf.tensor(hiddenValues, [rows, width]);
    const targets = tf.tensor1d(targetValues, 'int32');
    const trained = tf.variableGrads(() =>
      tf.sum(chunkedTokenLogprobs(tf.matMul(hidden, projection), head, targets, { chunkSize: 4 }).logprobs),
    );
    expect(Object.keys(trained.grads).sort()).toEqual(['test-head', 'test-projection']);
    const frozenHead = tf.tensor(headValues, [vocabulary, width]);
    const frozen = tf.variableGrads(
      () => tf.sum(chunkedTokenLogprobs(tf.matMul(hidden, projection), frozenHead, targets, { chunkSize: 4 }).logprobs),
      [projection],
    );
    expect(Object.keys(frozen.grads)).toEqual(['test-projection']);
    expect(
      relativeError(frozen.grads['test-projection']?.dataSync() as Float32Array, trained.grads['test-projection']?.dataSync() as Float32Array),
    ).toBeLessThan(1e-6);
    tf.dispose([head, projection, hidden, targets, frozenHead, trained.value, frozen.value]);
    tf.dispose(Object.values(trained.grads));
    tf.dispose(Object.values(frozen.grads));
  });

  test('top-k returns the most likely tokens with their log-probs', async () => {
    const { cpu, wasm } = await onBothBackends(tf, (backend) => {
      const hidden = tf.tensor(hiddenValues, [rows, width]);
      const head = tf.tensor(headValues, [vocabulary, width]);
      const targets = tf.tensor1d(targetValues, 'int32');
      if (backend === 'cpu') {
        const logits = tf.matMul(hidden, head, false, true);
        const { values, indices } = tf.topk(tf.sub(logits, tf.logSumExp(logits, -1, true)), 4);
        return [referenceLogprobs(hidden, head, targets), values, tf.cast(indices, 'float32')];
      }
      const result = chunkedTokenLogprobs(hidden, head, targets, { chunkSize: 3, topK: 4 });
      return [result.logprobs, result.topK?.logprobs as Tensor, tf.cast(result.topK?.tokenIds as Tensor, 'float32')];
    });
    expect(relativeError(wasm[0] as Float32Array, cpu[0] as Float32Array)).toBeLessThan(1e-5);
    expect(relativeError(wasm[1] as Float32Array, cpu[1] as Float32Array)).toBeLessThan(1e-5);
    expect(wasm[2]).toEqual(cpu[2]);
  });

  test('rejects bad shapes and options with ClawrlError', async () => {
    await tf.setBackend('wasm');
    const hidden = tf.zeros([4, width]);
    const head = tf.zeros([vocabulary, width]);
    const call = (targets: Tensor, options = {}) => () => chunkedTokenLogprobs(hidden, head, targets, options);
    const targets = tf.zeros([4], 'int32');
    for (const attempt of [call(tf.zeros([4])), call(tf.zeros([5], 'int32')), call(targets, { chunkSize: 0 }), call(targets, { topK: 99 })]) {
      expect(attempt).toThrow(ClawrlError);
    }
  });

  test('repeated training steps leak no tensors and no heap', async () => {
    await tf.setBackend('wasm');
    const head = tf.variable(tf.tensor(headValues, [vocabulary, width]), true, 'leak-head');
    const hidden = tf.tensor(hiddenValues, [rows, width]);
    const targets = tf.tensor1d(targetValues, 'int32');
    const step = () => {
      const { value, grads } = tf.variableGrads(() => tf.sum(chunkedTokenLogprobs(hidden, head, targets, { chunkSize: 3 }).logprobs));
      tf.dispose([value, ...Object.values(grads)]);
      const scored = chunkedTokenLogprobs(hidden, head, targets, { chunkSize: 4, topK: 2 });
      tf.dispose([scored.logprobs, scored.topK?.logprobs as Tensor, scored.topK?.tokenIds as Tensor]);
    };
    step();
    const before = tf.memory();
    const heapBefore = wasmMemoryUsage()?.allocatedBytes;
    for (let index = 0; index < 10; index++) step();
    expect(tf.memory().numTensors).toBe(before.numTensors);
    expect(tf.memory().numBytes).toBe(before.numBytes);
    expect(wasmMemoryUsage()?.allocatedBytes).toBe(heapBefore);
    tf.dispose([head, hidden, targets]);
  });
});
