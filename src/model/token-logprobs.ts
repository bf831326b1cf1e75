/**
 * log p(target | hidden) through the language-model head, in row chunks with a hand-written
 * gradient, so that neither the forward nor the backward pass ever holds more than one
 * [chunk, V] logits block: the chunk's logits are rebuilt in backward instead of being kept on
 * the tape. The gradient is the usual softmax one, dlogits = dy · (onehot(target) − softmax) / τ,
 * which also avoids tfjs's logSumExp gradient (a broadcast Equal over [T, V]). The anchor's term
 * (`anchorLogLikelihood`) goes through the head the same way.
 *
 * When the caller can afford rows·V floats until backward (`keepProbabilities`), the token
 * log-probs keep each chunk's softmax instead: backward then needs neither the head product again
 * nor a second softmax, which is a third of the head's work in a training step.
 */
import * as tf from '@tensorflow/tfjs';
import type { LanguageModelHead } from './transformer-parameters.js';

export interface TokenLogprobOptions {
  /** Logits are divided by this before the softmax (1 = the model's own distribution). */
  temperature: number;
  /** Rows per chunk; bounded so one [chunk, V] float32 block stays small. */
  chunkRows: number;
  /** Whether the head matrix receives a gradient (full fine-tuning). */
  trainableHead: boolean;
  /**
   * `tokenLogprobs` only: keep each chunk's softmax [chunk, V] for backward instead of rebuilding
   * the logits there. Costs 4·rows·V bytes until backward; the caller decides it can afford them.
   */
  keepProbabilities?: boolean;
}

/** Rows per chunk so that one logits block is about `blockBytes` (16 MiB by default). */
export function defaultChunkRows(vocabSize: number, blockBytes = 16 * 1024 * 1024): number {
  return Math.max(1, Math.floor(blockBytes / (4 * vocabSize)));
}

export function headLogits(hidden: tf.Tensor2D, head: LanguageModelHead, temperature: number): tf.Tensor2D {
  const logits: tf.Tensor2D = tf.matMul(hidden, head.matrix, false, head.transposed);
  return temperature === 1 ? logits : (tf.div(logits, temperature) as tf.Tensor2D);
}

/**
 * One chunk's per-row value through the head with a hand-written gradient: `value` maps the
 * chunk's logits (and its saved row tensors) to [N], `logitsGradient` gives d value / d logits
 * for an upstream dy [N]. Backward rebuilds the logits (only when `logitsGradient` asks for them)
 * instead of keeping them on the tape, and runs after the forward scope has disposed its
 * temporaries, so the row tensors are saved, and so are the tensors `keep` derives from the logits.
 */
function throughHead(
  hidden: tf.Tensor2D,
  head: LanguageModelHead,
  rowTensors: tf.Tensor[],
  options: TokenLogprobOptions,
  pass: {
    value: (logits: tf.Tensor2D, tensors: tf.Tensor[], vocabSize: number, kept: tf.Tensor[]) => tf.Tensor1D;
    logitsGradient: (logits: () => tf.Tensor2D, tensors: tf.Tensor[], vocabSize: number, dy: tf.Tensor1D, kept: tf.Tensor[]) => tf.Tensor2D;
    keep?: (logits: tf.Tensor2D) => tf.Tensor[];
  },
): tf.Tensor1D {
  const vocabSize = head.transposed ? head.matrix.shape[0] : head.matrix.shape[1];
  const logitsOf = (rows: tf.Tensor2D, matrix: tf.Tensor2D) => headLogits(rows, { matrix, transposed: head.transposed, otherLayout: null }, options.temperature);
  const count = rowTensors.length;
  const forward = (rows: tf.Tensor2D, matrix: tf.Tensor2D, save: tf.GradSaveFunc, saveMatrix: boolean): tf.Tensor1D => {
    const logits = logitsOf(rows, matrix);
    const kept = pass.keep?.(logits) ?? [];
    save([rows, ...(saveMatrix ? [matrix] : []), ...rowTensors, ...kept]);
    return pass.value(logits, rowTensors, vocabSize, kept);
  };
  const backward = (dy: tf.Tensor1D, rows: tf.Tensor2D, matrix: tf.Tensor2D, saved: tf.Tensor[]): { rows: tf.Tensor; matrix: tf.Tensor | null } => {
    const logitsGradient = pass.logitsGradient(() => logitsOf(rows, matrix), saved.slice(0, count), vocabSize, dy, saved.slice(count));
    const gradientLogits = tf.div(logitsGradient, options.temperature) as tf.Tensor2D;
    const rowsGradient =
      head.otherLayout !== null && !options.trainableHead
        ? tf.matMul(gradientLogits, head.otherLayout)
        : tf.matMul(gradientLogits, matrix, false, !head.transposed);
    if (!options.trainableHead) return { rows: rowsGradient, matrix: null };
    const matrixGradient = head.transposed ? tf.matMul(gradientLogits, rows, true, false) : tf.matMul(rows, gradientLogits, true, false);
    return { rows: rowsGradient, matrix: matrixGradient };
  };
  if (options.trainableHead) {
    const custom = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
      const [rows, matrix, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.GradSaveFunc];
      return {
        value: forward(rows, matrix, save, true),
        gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
          const result = backward(dy as tf.Tensor1D, saved[0] as tf.Tensor2D, saved[1] as tf.Tensor2D, saved.slice(2));
          return [result.rows, result.matrix ?? tf.zerosLike(saved[1] as tf.Tensor)];
        },
      };
    });
    return custom(hidden, head.matrix) as tf.Tensor1D;
  }
  const custom = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [rows, save] = args as [tf.Tensor2D, tf.GradSaveFunc];
    return {
      value: forward(rows, head.matrix, save, false),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => backward(dy as tf.Tensor1D, saved[0] as tf.Tensor2D, head.matrix, saved.slice(1)).rows,
    };
  });
  return custom(hidden) as tf.Tensor1D;
}

/** Splits the rows into chunks of at most `chunkRows` and concatenates the per-row results. */
function inChunks(hidden: tf.Tensor2D, rowTensors: tf.Tensor[], chunkRows: number, perChunk: (rows: tf.Tensor2D, tensors: tf.Tensor[]) => tf.Tensor1D): tf.Tensor1D {
  const rows = hidden.shape[0];
  if (rows <= chunkRows) return perChunk(hidden, rowTensors);
  const pieces: tf.Tensor1D[] = [];
  for (let start = 0; start < rows; start += chunkRows) {
    const size = Math.min(chunkRows, rows - start);
    const slice = (tensor: tf.Tensor) => tf.slice(tensor, [start, ...tensor.shape.slice(1).map(() => 0)], [size, ...tensor.shape.slice(1).map(() => -1)]);
    pieces.push(perChunk(tf.slice(hidden, [start, 0], [size, -1]), rowTensors.map(slice)));
  }
  return tf.concat(pieces);
}

/**
 * log Σ exp(logits) per row [N] from the logits and their softmax: with m the row's largest logit,
 * the largest probability is exp(m − m)/Σ exp(z − m), so lse = m − log(max p). The largest
 * probability is at least 1/V, so its log loses nothing to underflow, and XNNPACK's softmax is
 * an order of magnitude faster on wasm than the scalar Exp kernel tf.logSumExp goes through.
 */
export function logSumExpFromSoftmax(logits: tf.Tensor2D, probabilities: tf.Tensor2D): tf.Tensor1D {
  return tf.sub(tf.max(logits, 1), tf.log(tf.max(probabilities, 1))) as tf.Tensor1D;
}

/** Each row's logit at its target [N]: one flat gather, not a [N, V] one-hot product. */
function targetLogits(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Tensor1D {
  const [rows, vocabSize] = logits.shape;
  const flat = tf.add(tf.mul(tf.range(0, rows, 1, 'int32'), tf.scalar(vocabSize, 'int32')), targets);
  return tf.gather(tf.reshape(logits, [-1]), flat) as tf.Tensor1D;
}

/** d log p(target) / d logits for an upstream dy [N]: dy · (onehot(target) − softmax). */
function targetLogprobGradient(probabilities: tf.Tensor2D, targets: tf.Tensor1D, vocabSize: number, dy: tf.Tensor1D): tf.Tensor2D {
  return tf.mul(tf.sub(tf.oneHot(targets, vocabSize, 1, 0, 'float32'), probabilities), tf.expandDims(dy, 1)) as tf.Tensor2D;
}

/** log-probs [N] of `targets` [N] (int32) given `hidden` [N, d]. Differentiable w.r.t. hidden (and the head when trainable). */
export function tokenLogprobs(
  hidden: tf.Tensor2D,
  head: LanguageModelHead,
  targets: tf.Tensor1D,
  options: TokenLogprobOptions,
): tf.Tensor1D {
  // Kept or not, the softmax serves both the value (through logSumExpFromSoftmax) and the gradient.
  const keep = options.keepProbabilities === true;
  return inChunks(hidden, [targets], options.chunkRows, (rows, tensors) =>
    throughHead(rows, head, tensors, options, {
      value: (logits, [chunkTargets], _vocabSize, kept) =>
        tf.sub(targetLogits(logits, chunkTargets as tf.Tensor1D), logSumExpFromSoftmax(logits, (kept[0] ?? tf.softmax(logits)) as tf.Tensor2D)) as tf.Tensor1D,
      logitsGradient: (logits, [chunkTargets], vocabSize, dy, kept) =>
        targetLogprobGradient((kept[0] ?? tf.softmax(logits())) as tf.Tensor2D, chunkTargets as tf.Tensor1D, vocabSize, dy),
      ...(keep ? { keep: (logits: tf.Tensor2D) => [tf.softmax(logits)] } : {}),
    }),
  );
}

/** [N, K] values scattered into a zero [N, V] at their token ids (distinct within a row). */
function scattered(tokenIds: tf.Tensor, values: tf.Tensor, vocabSize: number): tf.Tensor2D {
  const [rows, width] = tokenIds.shape as [number, number];
  const rowIndex = tf.reshape(tf.tile(tf.expandDims(tf.range(0, rows, 1, 'int32'), 1), [1, width]), [-1, 1]);
  const indices = tf.concat([rowIndex, tf.reshape(tokenIds, [-1, 1])], 1);
  return tf.scatterND(indices, tf.reshape(values, [-1]), [rows, vocabSize]) as tf.Tensor2D;
}

/** Probability mass below which the anchor's rest bucket is taken as this, so its log stays finite. */
const smallestRest = 1e-20;

/**
 * The anchor's log-likelihood per row [N]: with the reference's K likeliest tokens S (`tokenIds`
 * [N, K] int32, distinct within a row), their reference probabilities q (`weights` [N, K]) and
 * the rest bucket q_r = 1 − Σ q, Σ_{k∈S} q_k·log π_k + q_r·log(1 − Σ_{k∈S} π_k). Its negation plus
 * the constant Σ q·log q + q_r·log q_r is KL(q ‖ π) over the K + 1 buckets: zero exactly when
 * the policy gives each listed token the reference's probability and the rest what the
 * reference gives the rest. One head pass whatever K is. With P = Σ_S π and c = (Σq − P)/(1 − P),
 * d/dlogits = dy · (W − π ⊙ (M + (1 − M)·c)), W the scattered q and M the set's indicator.
 */
export function anchorLogLikelihood(
  hidden: tf.Tensor2D,
  head: LanguageModelHead,
  tokenIds: tf.Tensor2D,
  weights: tf.Tensor2D,
  options: TokenLogprobOptions,
): tf.Tensor1D {
  const parts = (logits: tf.Tensor2D, [ids, rowWeights]: tf.Tensor[], vocabSize: number) => {
    const dense = scattered(ids as tf.Tensor, rowWeights as tf.Tensor, vocabSize);
    const inSet = scattered(ids as tf.Tensor, tf.onesLike(rowWeights as tf.Tensor), vocabSize);
    const probabilities = tf.softmax(logits);
    const listedWeight = tf.sum(rowWeights as tf.Tensor, 1);
    const rest = tf.maximum(tf.sum(tf.mul(probabilities, tf.sub(1, inSet)), 1), smallestRest);
    return { dense, inSet, probabilities, listedWeight, rest };
  };
  return inChunks(hidden, [tokenIds, weights], options.chunkRows, (rows, tensors) =>
    throughHead(rows, head, tensors, options, {
      value: (logits, chunkTensors, vocabSize) => {
        const { dense, probabilities, listedWeight, rest } = parts(logits, chunkTensors, vocabSize);
        const listed = tf.sub(tf.sum(tf.mul(logits, dense), 1), tf.mul(listedWeight, logSumExpFromSoftmax(logits, probabilities)));
        return tf.add(listed, tf.mul(tf.relu(tf.sub(1, listedWeight)), tf.log(rest))) as tf.Tensor1D;
      },
      logitsGradient: (logits, chunkTensors, vocabSize, dy) => {
        const { dense, inSet, probabilities, listedWeight, rest } = parts(logits(), chunkTensors, vocabSize);
        // 1 − P is the rest's mass itself, which keeps its precision where P is close to 1.
        const restShare = tf.expandDims(tf.div(tf.sub(listedWeight, tf.sub(1, rest)), rest), 1);
        const spread = tf.add(inSet, tf.mul(tf.sub(1, inSet), restShare));
        return tf.mul(tf.sub(dense, tf.mul(probabilities, spread)), tf.expandDims(dy, 1)) as tf.Tensor2D;
      },
    }),
  );
}
