/**
 * log p(target | hidden) through the language-model head, in row chunks with a hand-written
 * gradient, so that neither the forward nor the backward pass ever holds more than one
 * [chunk, V] logits block: the chunk's logits are rebuilt in backward instead of being kept on
 * the tape. The gradient is the usual softmax one, dlogits = dy · (onehot(target) − softmax) / τ,
 * which also avoids tfjs's logSumExp gradient (a broadcast Equal over [T, V]).
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
}

/** Rows per chunk so that one logits block is about `blockBytes` (16 MiB by default). */
export function defaultChunkRows(vocabSize: number, blockBytes = 16 * 1024 * 1024): number {
  return Math.max(1, Math.floor(blockBytes / (4 * vocabSize)));
}

export function headLogits(hidden: tf.Tensor2D, head: LanguageModelHead, temperature: number): tf.Tensor2D {
  const logits: tf.Tensor2D = tf.matMul(hidden, head.matrix, false, head.transposed);
  return temperature === 1 ? logits : (tf.div(logits, temperature) as tf.Tensor2D);
}

function chunkLogprobs(
  hidden: tf.Tensor2D,
  head: LanguageModelHead,
  targets: tf.Tensor1D,
  options: TokenLogprobOptions,
): tf.Tensor1D {
  const vocabSize = head.transposed ? head.matrix.shape[0] : head.matrix.shape[1];
  // Backward runs after the forward scope has disposed its temporaries, so `targets` is saved
  // with the other tensors rather than captured.
  const forward = (rows: tf.Tensor2D, matrix: tf.Tensor2D): tf.Tensor1D => {
    const logits = headLogits(rows, { matrix, transposed: head.transposed, otherLayout: null }, options.temperature);
    const picked = tf.sum(tf.mul(logits, tf.oneHot(targets, vocabSize, 1, 0, 'float32')), 1);
    return tf.sub(picked, tf.logSumExp(logits, 1)) as tf.Tensor1D;
  };
  const backward = (
    dy: tf.Tensor1D,
    rows: tf.Tensor2D,
    matrix: tf.Tensor2D,
    savedTargets: tf.Tensor1D,
  ): { rows: tf.Tensor; matrix: tf.Tensor | null } => {
    const logits = headLogits(rows, { matrix, transposed: head.transposed, otherLayout: null }, options.temperature);
    const gradientLogits = tf.div(
      tf.mul(tf.sub(tf.oneHot(savedTargets, vocabSize, 1, 0, 'float32'), tf.softmax(logits)), tf.expandDims(dy, 1)),
      options.temperature,
    ) as tf.Tensor2D;
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
      const [rows, matrix, save] = args as [tf.Tensor, tf.Tensor, tf.GradSaveFunc];
      save([rows, matrix, targets]);
      return {
        value: forward(rows as tf.Tensor2D, matrix as tf.Tensor2D),
        gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
          const result = backward(dy as tf.Tensor1D, saved[0] as tf.Tensor2D, saved[1] as tf.Tensor2D, saved[2] as tf.Tensor1D);
          return [result.rows, result.matrix ?? tf.zerosLike(saved[1] as tf.Tensor)];
        },
      };
    });
    return custom(hidden, head.matrix) as tf.Tensor1D;
  }
  const custom = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [rows, save] = args as [tf.Tensor, tf.GradSaveFunc];
    save([rows, targets]);
    return {
      value: forward(rows as tf.Tensor2D, head.matrix),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) =>
        backward(dy as tf.Tensor1D, saved[0] as tf.Tensor2D, head.matrix, saved[1] as tf.Tensor1D).rows,
    };
  });
  return custom(hidden) as tf.Tensor1D;
}

/** log-probs [N] of `targets` [N] (int32) given `hidden` [N, d]. Differentiable w.r.t. hidden (and the head when trainable). */
export function tokenLogprobs(
  hidden: tf.Tensor2D,
  head: LanguageModelHead,
  targets: tf.Tensor1D,
  options: TokenLogprobOptions,
): tf.Tensor1D {
  const rows = hidden.shape[0];
  if (rows <= options.chunkRows) return chunkLogprobs(hidden, head, targets, options);
  const pieces: tf.Tensor1D[] = [];
  for (let start = 0; start < rows; start += options.chunkRows) {
    const size = Math.min(options.chunkRows, rows - start);
    pieces.push(chunkLogprobs(tf.slice(hidden, [start, 0], [size, -1]), head, tf.slice(targets, [start], [size]), options));
  }
  return tf.concat(pieces);
}
