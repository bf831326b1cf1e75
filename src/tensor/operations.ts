import * as tf from '@tensorflow/tfjs';
import type { Tensor } from '@tensorflow/tfjs';

/*
 * Model-facing tensor helpers. They are plain tfjs ops (any backend) with gradients, written so that
 * the backward pass stays cheap on wasm.
 */

/** Forward log-sum-exp over the last axis, shape without that axis; shifted by the row max. */
function logSumExpValue(x: Tensor): Tensor {
  return tf.tidy(() => {
    const maximum = tf.max(x, -1, true);
    const sum = tf.sum(tf.exp(tf.sub(x, maximum)), -1);
    return tf.add(tf.log(sum), tf.squeeze(maximum, [-1]));
  });
}

const logSumExpWithGradient = tf.customGrad((...inputs) => {
  const input = inputs[0] as Tensor;
  const save = inputs[1] as (tensors: Tensor[]) => void;
  const value = logSumExpValue(input);
  save([input, value]);
  return {
    value,
    // d lse / dx = softmax(x) = exp(x - lse). tf.logSumExp's own gradient goes through max(),
    // which needs a broadcast Equal over the whole [T,V] input (170 ms at T=64, V=49152 on wasm).
    gradFunc: (dy, saved) => {
      const [savedInput, savedValue] = saved as [Tensor, Tensor];
      return tf.mul(tf.expandDims(dy as Tensor, -1), tf.exp(tf.sub(savedInput, tf.expandDims(savedValue, -1))));
    },
  };
});

export interface LogSumExpOptions {
  /** Keep the reduced last axis with size 1. */
  keepDims?: boolean;
}

/** log Σ exp(x) over the last axis, with a softmax gradient that avoids tf.logSumExp's max() path. */
export function logSumExp(x: Tensor, options: LogSumExpOptions = {}): Tensor {
  const value = logSumExpWithGradient(x);
  if (options.keepDims !== true) return value;
  return tf.tidy(() => tf.expandDims(value, -1));
}

/** Log-softmax over the last axis built on `logSumExp`. */
export function logSoftmax(x: Tensor): Tensor {
  return tf.tidy(() => tf.sub(x, logSumExp(x, { keepDims: true })));
}

export interface RmsNormOptions {
  epsilon?: number;
}

/** RMSNorm over the last axis (Llama): x / sqrt(mean(x²) + ε) · weight. */
export function rmsNorm(x: Tensor, weight: Tensor, options: RmsNormOptions = {}): Tensor {
  const epsilon = options.epsilon ?? 1e-6;
  return tf.tidy(() => {
    const meanSquare = tf.mean(tf.square(x), -1, true);
    return tf.mul(tf.mul(x, tf.rsqrt(tf.add(meanSquare, epsilon))), weight);
  });
}

/** SwiGLU activation: silu(gate) · up, elementwise. */
export function swiglu(gate: Tensor, up: Tensor): Tensor {
  return tf.tidy(() => tf.mul(tf.mul(gate, tf.sigmoid(gate)), up));
}
