import * as tf from '@tensorflow/tfjs';
import type { Tensor } from '@tensorflow/tfjs';
import { ClawrlError } from '../spec/clawrl-error.js';
import { logSumExp } from './operations.js';

/*
 * Per-token log p(target) from final hidden states and an lm-head without holding the full [T,V]
 * logits: rows are processed in chunks, forward and backward. The backward pass recomputes each
 * chunk's logits instead of keeping them on the tape (an autodiff loop would keep every chunk alive
 * until backprop, which is the full [T,V] again). One extra matmul per chunk buys memory O(chunk·V).
 *
 * With logits z = h·Wᵀ and lse = log Σ exp z, log p(t) = z_t − lse, and
 *   ∂/∂z = dy · (onehot(t) − softmax(z)),  ∂/∂h = (∂/∂z)·W,  ∂/∂W = (∂/∂z)ᵀ·h.
 * No gradient flows through a gather, so tf.gather's missing wasm gradient is never needed.
 */

export interface ChunkedTokenLogprobsOptions {
  /** Rows per chunk; memory peaks at about 3 · chunkSize · V floats. Default 64. */
  chunkSize?: number;
  /**
   * Return the k most likely tokens per row with their log-probs. Scoring only: the result has no
   * gradient when topK is set.
   */
  topK?: number;
  /**
   * Compute a gradient for the lm-head. Defaults to true only when lmHead is a trainable tf.Variable;
   * pass true for a plain tensor differentiated with tf.grads, or for a head derived from variables.
   * Skipping it saves one [V,d] product per chunk in the backward pass.
   */
  lmHeadGradient?: boolean;
}

export interface ChunkedTokenLogprobs {
  /** log p(target) per row, float32, shape of targets. */
  logprobs: Tensor;
  /** With options.topK: float32 [..., k] log-probs and int32 [..., k] token ids, best first. */
  topK?: { logprobs: Tensor; tokenIds: Tensor };
}

interface ChunkBounds {
  start: number;
  size: number;
}

function chunkBounds(rows: number, chunkSize: number): ChunkBounds[] {
  const bounds: ChunkBounds[] = [];
  for (let start = 0; start < rows; start += chunkSize) bounds.push({ start, size: Math.min(chunkSize, rows - start) });
  return bounds;
}

/** The logit of each row's target, read out of a [rows, V] logits chunk with a flat 1-D gather. */
function targetLogits(logits: Tensor, targets: Tensor): Tensor {
  const [rows, vocabulary] = logits.shape as [number, number];
  const flatIndices = tf.add(tf.mul(tf.range(0, rows, 1, 'int32'), tf.scalar(vocabulary, 'int32')), targets);
  return tf.gather(tf.reshape(logits, [rows * vocabulary]), flatIndices);
}

/** Forward pass over chunks: per-row log-sum-exp and target log-prob, plus optional top-k. */
function forwardChunks(
  hidden: Tensor,
  lmHead: Tensor,
  targets: Tensor,
  chunkSize: number,
  topK: number | undefined,
): { logsumexp: Tensor; logprobs: Tensor; topLogprobs?: Tensor; topIds?: Tensor } {
  const rows = hidden.shape[0] ?? 0;
  const lseParts: Tensor[] = [];
  const logprobParts: Tensor[] = [];
  const topLogprobParts: Tensor[] = [];
  const topIdParts: Tensor[] = [];
  for (const { start, size } of chunkBounds(rows, chunkSize)) {
    tf.tidy(() => {
      const hiddenChunk = tf.slice(hidden, [start, 0], [size, -1]);
      const logits = tf.matMul(hiddenChunk, lmHead, false, true);
      const lse = logSumExp(logits);
      const logprob = tf.sub(targetLogits(logits, tf.slice(targets, [start], [size])), lse);
      lseParts.push(tf.keep(lse));
      logprobParts.push(tf.keep(logprob));
      if (topK !== undefined) {
        const { values, indices } = tf.topk(logits, topK, true);
        topLogprobParts.push(tf.keep(tf.sub(values, tf.expandDims(lse, -1))));
        topIdParts.push(tf.keep(indices));
      }
    });
  }
  const concatenated = (parts: Tensor[]): Tensor => {
    const result = parts.length === 1 ? (parts[0] as Tensor) : tf.concat(parts, 0);
    if (parts.length > 1) tf.dispose(parts);
    return result;
  };
  const result: { logsumexp: Tensor; logprobs: Tensor; topLogprobs?: Tensor; topIds?: Tensor } = {
    logsumexp: concatenated(lseParts),
    logprobs: concatenated(logprobParts),
  };
  if (topK !== undefined) {
    result.topLogprobs = concatenated(topLogprobParts);
    result.topIds = concatenated(topIdParts);
  }
  return result;
}

/** Backward pass over chunks; returns [∂hidden, ∂lmHead | undefined]. */
function backwardChunks(
  dy: Tensor,
  hidden: Tensor,
  lmHead: Tensor,
  targets: Tensor,
  logsumexp: Tensor,
  chunkSize: number,
  withLmHead: boolean,
): [Tensor, Tensor | undefined] {
  const rows = hidden.shape[0] ?? 0;
  const vocabulary = lmHead.shape[0] ?? 0;
  const hiddenParts: Tensor[] = [];
  let lmHeadGradient: Tensor | undefined;
  for (const { start, size } of chunkBounds(rows, chunkSize)) {
    tf.tidy(() => {
      const hiddenChunk = tf.slice(hidden, [start, 0], [size, -1]);
      const logits = tf.matMul(hiddenChunk, lmHead, false, true);
      const probabilities = tf.exp(tf.sub(logits, tf.expandDims(tf.slice(logsumexp, [start], [size]), -1)));
      const oneHot = tf.oneHot(tf.slice(targets, [start], [size]), vocabulary, 1, 0, 'float32');
      const logitGradient = tf.mul(tf.sub(oneHot, probabilities), tf.expandDims(tf.slice(dy, [start], [size]), -1));
      hiddenParts.push(tf.keep(tf.matMul(logitGradient, lmHead)));
      if (withLmHead) {
        const contribution = tf.matMul(logitGradient, hiddenChunk, true, false);
        const previous = lmHeadGradient;
        lmHeadGradient = tf.keep(previous === undefined ? contribution : tf.add(previous, contribution));
        if (previous !== undefined) previous.dispose();
      }
    });
  }
  const hiddenGradient = hiddenParts.length === 1 ? (hiddenParts[0] as Tensor) : tf.concat(hiddenParts, 0);
  if (hiddenParts.length > 1) tf.dispose(hiddenParts);
  return [hiddenGradient, lmHeadGradient];
}

/**
 * log p(target) for every row of `hidden` [..., d] under the lm-head `lmHead` [V, d] (logits =
 * hidden·lmHeadᵀ), with targets int32 of shape [...]. Differentiable w.r.t. hidden (and the lm-head,
 * see options). The caller owns and disposes the returned tensors.
 */
export function chunkedTokenLogprobs(
  hidden: Tensor,
  lmHead: Tensor,
  targets: Tensor,
  options: ChunkedTokenLogprobsOptions = {},
): ChunkedTokenLogprobs {
  const chunkSize = options.chunkSize ?? 64;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) {
    throw new ClawrlError('invalid_request', `chunkSize must be a positive integer, got ${chunkSize}`);
  }
  const modelWidth = hidden.shape[hidden.shape.length - 1] ?? 0;
  const leadingShape = hidden.shape.slice(0, -1);
  if (lmHead.rank !== 2 || lmHead.shape[1] !== modelWidth) {
    throw new ClawrlError('invalid_request', `lmHead must be [V, ${modelWidth}], got [${lmHead.shape.join(',')}]`);
  }
  if (targets.dtype !== 'int32' || targets.shape.join(',') !== leadingShape.join(',')) {
    throw new ClawrlError(
      'invalid_request',
      `targets must be int32 of shape [${leadingShape.join(',')}], got ${targets.dtype} [${targets.shape.join(',')}]`,
    );
  }
  const rows = leadingShape.reduce((product, size) => product * size, 1);
  const topK = options.topK;
  if (topK !== undefined && (!Number.isInteger(topK) || topK < 1 || topK > (lmHead.shape[0] ?? 0))) {
    throw new ClawrlError('invalid_request', `topK must be an integer in [1, V], got ${topK}`);
  }

  if (topK !== undefined) {
    const result = tf.tidy(() => {
      const flatHidden = tf.reshape(hidden, [rows, modelWidth]);
      const flatTargets = tf.reshape(targets, [rows]);
      const pass = forwardChunks(flatHidden, lmHead, flatTargets, chunkSize, topK);
      return {
        logprobs: tf.reshape(pass.logprobs, leadingShape),
        topLogprobs: tf.reshape(pass.topLogprobs as Tensor, [...leadingShape, topK]),
        topIds: tf.reshape(pass.topIds as Tensor, [...leadingShape, topK]),
      };
    });
    return { logprobs: result.logprobs, topK: { logprobs: result.topLogprobs, tokenIds: result.topIds } };
  }

  const withLmHead = options.lmHeadGradient ?? (lmHead instanceof tf.Variable && lmHead.trainable);
  const compute = tf.customGrad((...inputs) => {
    const save = inputs[inputs.length - 1] as (tensors: Tensor[]) => void;
    const flatHidden = inputs[0] as Tensor;
    const head = withLmHead ? (inputs[1] as Tensor) : lmHead;
    const flatTargets = tf.reshape(targets, [rows]);
    const pass = forwardChunks(flatHidden, head, flatTargets, chunkSize, undefined);
    // Everything the backward pass reads is saved, so it outlives the caller's tidy scopes.
    save([flatHidden, head, flatTargets, pass.logsumexp]);
    return {
      value: pass.logprobs,
      gradFunc: (dy, saved) => {
        const [savedHidden, savedHead, savedTargets, savedLse] = saved as [Tensor, Tensor, Tensor, Tensor];
        const [hiddenGradient, lmHeadGradient] = backwardChunks(
          dy as Tensor,
          savedHidden,
          savedHead,
          savedTargets,
          savedLse,
          chunkSize,
          withLmHead,
        );
        return withLmHead ? [hiddenGradient, lmHeadGradient as Tensor] : [hiddenGradient];
      },
    };
  });
  const logprobs = tf.tidy(() => {
    const flatHidden = tf.reshape(hidden, [rows, modelWidth]);
    const flatLogprobs = withLmHead ? compute(flatHidden, lmHead) : compute(flatHidden);
    return tf.reshape(flatLogprobs, leadingShape);
  });
  return { logprobs };
}
