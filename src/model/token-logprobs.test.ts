import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, test } from 'vitest';
import { initializeTensorBackend } from '../tensor/index.js';
import { randomValues, relativeError } from '../tensor/testing/on-both-backends.js';
import { tokenLogprobs, anchorLogLikelihood } from './token-logprobs.js';

beforeAll(async () => {
  await initializeTensorBackend({ backend: 'wasm' });
});

const rows = 7;
const width = 6;
const vocabulary = 19;
const temperature = 0.8;
const hiddenValues = randomValues(rows * width, 51, 2);
const headValues = randomValues(width * vocabulary, 52);
// Three distinct tokens per row with weights summing to less than 1, as a reference's top tokens do.
const tokenIdValues = Array.from({ length: rows }, (_, row) => [row % vocabulary, (row + 5) % vocabulary, (row + 11) % vocabulary]);
const weightValues = tokenIdValues.map((_, row) => [0.5, 0.2 + row / 100, 0.1]);
const rowWeights = randomValues(rows, 53);

/** Σ_k q_k·log π_k + (1 − Σq)·log(1 − Σ_k π_k) written with plain ops, differentiated by tfjs itself. */
function plainAnchor(hidden: tf.Tensor2D, head: tf.Tensor2D): tf.Tensor1D {
  const logits = tf.div(tf.matMul(hidden, head), temperature);
  const logSoftmax = tf.sub(logits, tf.logSumExp(logits, 1, true));
  const dense = tf.tensor2d(
    tokenIdValues.map((ids, row) => Array.from({ length: vocabulary }, (_, id) => weightValues[row]![ids.indexOf(id)] ?? 0)),
  );
  const inSet = tf.tensor2d(tokenIdValues.map((ids) => Array.from({ length: vocabulary }, (_, id) => (ids.includes(id) ? 1 : 0))));
  const listedMass = tf.sum(tf.mul(tf.exp(logSoftmax), inSet), 1);
  const restWeight = tf.tensor1d(weightValues.map((weights) => 1 - weights.reduce((sum, weight) => sum + weight, 0)));
  return tf.add(tf.sum(tf.mul(logSoftmax, dense), 1), tf.mul(restWeight, tf.log(tf.sub(1, listedMass)))) as tf.Tensor1D;
}

function valuesAndGradients(compute: (hidden: tf.Tensor2D, head: tf.Tensor2D) => tf.Tensor1D): Float32Array[] {
  return tf.tidy(() => {
    const hidden = tf.tensor2d(hiddenValues, [rows, width]);
    const head = tf.tensor2d(headValues, [width, vocabulary]);
    const weights = tf.tensor1d(rowWeights);
    const gradients = tf.grads((h, w) => tf.sum(tf.mul(compute(h as tf.Tensor2D, w as tf.Tensor2D), weights)))([hidden, head]);
    return [compute(hidden, head), ...gradients];
  }).map((tensor) => Float32Array.from(tensor.dataSync()));
}

describe('anchorLogLikelihood', () => {
  for (const chunkRows of [3, 64]) {
    test(`values and gradients (hidden and head) match plain log-softmax ops, chunks of ${chunkRows} rows`, () => {
      const expected = valuesAndGradients(plainAnchor);
      const actual = valuesAndGradients((hidden, head) =>
        anchorLogLikelihood(
          hidden,
          { matrix: head, transposed: false, otherLayout: null },
          tf.tensor2d(tokenIdValues, [rows, 3], 'int32'),
          tf.tensor2d(weightValues, [rows, 3]),
          { temperature, chunkRows, trainableHead: true },
        ),
      );
      expect(relativeError(actual[0]!, expected[0]!), 'values').toBeLessThan(1e-5);
      expect(relativeError(actual[1]!, expected[1]!), 'd hidden').toBeLessThan(1e-5);
      expect(relativeError(actual[2]!, expected[2]!), 'd head').toBeLessThan(1e-5);
    });
  }

  test('the KL it gives is zero at the reference and positive elsewhere', () => {
    const [atReference, moved] = tf.tidy(() => {
      const hidden = tf.tensor2d(hiddenValues, [rows, width]);
      const head = tf.tensor2d(headValues, [width, vocabulary]);
      const logits = tf.div(tf.matMul(hidden, head), temperature);
      const top = tf.topk(tf.sub(logits, tf.logSumExp(logits, 1, true)), 3);
      const weights = tf.exp(top.values) as tf.Tensor2D;
      const rest = tf.sub(1, tf.sum(weights, 1));
      const constant = tf.add(tf.sum(tf.mul(weights, top.values), 1), tf.mul(rest, tf.log(rest)));
      const options = { temperature, chunkRows: 64, trainableHead: false };
      const kl = (matrix: tf.Tensor2D) =>
        tf.sub(constant, anchorLogLikelihood(hidden, { matrix, transposed: false, otherLayout: null }, top.indices as tf.Tensor2D, weights, options));
      return [kl(head), kl(tf.add(head, tf.mul(0.3, tf.tensor2d(randomValues(width * vocabulary, 54), [width, vocabulary]))) as tf.Tensor2D)];
    }).map((tensor) => Array.from(tensor.dataSync()));
    atReference!.forEach((value) => expect(Math.abs(value)).toBeLessThan(1e-5));
    moved!.forEach((value) => expect(value).toBeGreaterThan(1e-4));
  });

  test('one token of weight 1 per row (no rest) is the token log-prob', () => {
    const [weighted, single] = tf.tidy(() => {
      const hidden = tf.tensor2d(hiddenValues, [rows, width]);
      const head = { matrix: tf.tensor2d(headValues, [width, vocabulary]), transposed: false, otherLayout: null };
      const targets = tokenIdValues.map((ids) => ids[1]!);
      const options = { temperature, chunkRows: 4, trainableHead: false };
      return [
        anchorLogLikelihood(hidden, head, tf.tensor2d(targets, [rows, 1], 'int32'), tf.ones([rows, 1]) as tf.Tensor2D, options),
        tokenLogprobs(hidden, head, tf.tensor1d(targets, 'int32'), options),
      ];
    }).map((tensor) => Float32Array.from(tensor.dataSync()));
    expect(relativeError(weighted!, single!)).toBeLessThan(1e-6);
  });
});

/** log p(target) with plain ops (tf.logSumExp), differentiated by tfjs itself. */
function plainTokenLogprobs(hidden: tf.Tensor2D, head: tf.Tensor2D, targets: number[]): tf.Tensor1D {
  const logits = tf.div(tf.matMul(hidden, head), temperature);
  const logSoftmax = tf.sub(logits, tf.logSumExp(logits, 1, true));
  return tf.sum(tf.mul(logSoftmax, tf.oneHot(tf.tensor1d(targets, 'int32'), vocabulary, 1, 0, 'float32')), 1) as tf.Tensor1D;
}

describe('tokenLogprobs', () => {
  const targets = tokenIdValues.map((ids) => ids[2]!);
  for (const keepProbabilities of [false, true]) {
    for (const chunkRows of [3, 64]) {
      for (const trainableHead of [false, true]) {
        test(`values and gradients match plain log-softmax ops (${keepProbabilities ? 'softmax kept' : 'logits rebuilt'} for backward, chunks of ${chunkRows} rows, head ${trainableHead ? 'trained' : 'frozen'})`, () => {
          const expected = valuesAndGradients((hidden, head) => plainTokenLogprobs(hidden, head, targets));
          const compute = (hidden: tf.Tensor2D, head: tf.Tensor2D) =>
            tokenLogprobs(hidden, { matrix: head, transposed: false, otherLayout: null }, tf.tensor1d(targets, 'int32'), {
              temperature,
              chunkRows,
              trainableHead,
              keepProbabilities,
            });
          // A frozen head has no gradient path of its own: differentiate by the hidden rows only.
          const actual = trainableHead
            ? valuesAndGradients(compute)
            : tf
                .tidy(() => {
                  const hidden = tf.tensor2d(hiddenValues, [rows, width]);
                  const head = tf.tensor2d(headValues, [width, vocabulary]);
                  const weights = tf.tensor1d(rowWeights);
                  return [compute(hidden, head), tf.grad((h) => tf.sum(tf.mul(compute(h as tf.Tensor2D, head), weights)))(hidden)];
                })
                .map((tensor) => Float32Array.from(tensor.dataSync()));
          expect(relativeError(actual[0]!, expected[0]!), 'values').toBeLessThan(1e-5);
          expect(relativeError(actual[1]!, expected[1]!), 'd hidden').toBeLessThan(1e-5);
          if (trainableHead) expect(relativeError(actual[2]!, expected[2]!), 'd head').toBeLessThan(1e-5);
        });
      }
    }
  }

  test('a target far below the others keeps its exact log-prob (no softmax underflow)', () => {
    // Logits 0 and −200: the target's probability (e^−200) underflows float32, its log-prob does not.
    const values = tf.tidy(() => {
      const hidden = tf.tensor2d([[1]]);
      const head = { matrix: tf.tensor2d([[0, -200, 0, 0]]), transposed: false, otherLayout: null };
      return tokenLogprobs(hidden, head, tf.tensor1d([1], 'int32'), { temperature: 1, chunkRows: 64, trainableHead: false, keepProbabilities: true });
    });
    expect(values.dataSync()[0]).toBeCloseTo(-200 - Math.log(3), 4);
    values.dispose();
  });
});
