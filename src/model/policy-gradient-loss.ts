/**
 * The tensor form of the trainer's objective, for `forwardBackward`: the clipped surrogate with
 * truncated importance sampling, the optional k3 KL and the optional anchor, aggregated token-level
 * over the batch.
 * `src/core/rl/policy-loss.ts` is the number form and documents the formula; the two must agree
 * (`policy-gradient-loss.test.ts`).
 *
 * A sequence's OPD support set adds, at each position, the same clipped surrogate over the set's
 * tokens, without the importance weight (`core/rl/policy-loss.ts`, sp_t).
 *
 * ℓ_old is the trainer's own log-prob before the batch's first update. On that first pass it
 * equals ℓ's value, so it is ℓ with its gradient stopped: ρ = exp(ℓ − stop(ℓ)) is 1 but carries
 * ∇ℓ, and w = min(exp(stop(ℓ) − μ), C) is a constant weight. Later passes over the same batch
 * (`--train-epochs`) pass the first pass's log-probs as `proximalLogprobs`, and the clip acts.
 */
import * as tf from '@tensorflow/tfjs';
import type { PolicyLossOptions } from '../core/rl/policy-loss.js';
import { supportWidth, type TokenLoss } from './transformer-training.js';

export interface PolicyGradientSequence {
  rolloutLogprobs: readonly number[];
  /** ℓ_old; default ℓ with its gradient stopped. */
  proximalLogprobs?: readonly number[];
  advantages: readonly number[];
  lossMask: readonly number[];
  /** Needed when β > 0. */
  referenceLogprobs?: readonly number[];
  /** Per response token, the advantages of the support tokens listed for `forwardBackward`. */
  support?: readonly { advantages: readonly number[]; proximalLogprobs?: readonly number[] }[];
  /**
   * Needed when α > 0: per response token `anchorNegativeEntropyOf` the anchor's weights (listed
   * for `forwardBackward` as its `anchor`), so the term's value is KL(q ‖ π), 0 at the base.
   */
  anchorNegativeEntropy?: readonly number[];
}

/** Σ_k q_k·log q_k + q_r·log q_r over one position's listed weights and their rest q_r = 1 − Σ q. */
export function anchorNegativeEntropyOf(weights: readonly number[]): number {
  const rest = Math.max(0, 1 - weights.reduce((sum, weight) => sum + weight, 0));
  const term = (weight: number) => (weight > 0 ? weight * Math.log(weight) : 0);
  return weights.reduce((sum, weight) => sum + term(weight), term(rest));
}

/**
 * The anchor of one reply from the reference's top log-probs at each response position (a
 * `score` with `topLogprobs`): the token sets and probabilities `forwardBackward` takes as the
 * sequence's `anchor`, and the per-position negative entropies the loss needs.
 */
export function anchorOfTopLogprobs(top: readonly (readonly { tokenId: number; logprob: number }[])[]): {
  anchor: { tokenIds: number[][]; weights: number[][] };
  negativeEntropy: number[];
} {
  const weights = top.map((position) => position.map((entry) => Math.exp(entry.logprob)));
  return {
    anchor: { tokenIds: top.map((position) => position.map((entry) => entry.tokenId)), weights },
    negativeEntropy: weights.map(anchorNegativeEntropyOf),
  };
}

/** KL(q ‖ π) per position from the negative entropies and the anchor log-likelihoods `forwardBackward` returned. */
export function anchorKlOf(negativeEntropy: readonly number[], anchorLogprobs: readonly number[]): number[] {
  return negativeEntropy.map((value, position) => value - (anchorLogprobs[position] ?? 0));
}

/** Identity forward, zero gradient backward. */
const stopGradient = tf.customGrad((...inputs: (tf.Tensor | tf.GradSaveFunc)[]) => ({
  value: tf.clone(inputs[0] as tf.Tensor),
  gradFunc: (upstream: tf.Tensor) => tf.zerosLike(upstream),
})) as (input: tf.Tensor) => tf.Tensor;

/**
 * ℓ_old of a support tensor: ℓ itself (gradient stopped) when no position gives proximal
 * log-probs; otherwise every position must give them, and padded columns keep their own ℓ.
 */
function supportProximalOf(
  support: NonNullable<PolicyGradientSequence['support']>,
  values: tf.Tensor2D,
  width: number,
  sequenceIndex: number,
): tf.Tensor {
  const own = stopGradient(values);
  if (support.every((position) => position.proximalLogprobs === undefined)) return own;
  const given = new Float32Array(support.length * width);
  const isGiven = new Uint8Array(support.length * width);
  support.forEach((position, row) => {
    const proximal = position.proximalLogprobs;
    if (proximal?.length !== position.advantages.length) {
      throw new RangeError(`sequence ${sequenceIndex}: the support's proximalLogprobs at position ${row} need one entry per support token`);
    }
    proximal.forEach((value, column) => {
      given[row * width + column] = value;
      isGiven[row * width + column] = 1;
    });
  });
  return tf.where(tf.tensor2d(isGiven, [support.length, width], 'bool'), tf.tensor2d(given, [support.length, width]), own);
}

/**
 * The loss over one `forwardBackward` call's sequences. `batchLossTokens` is Σ mask over the whole
 * batch (several calls may share one optimizer step); it defaults to this call's own.
 */
export function createPolicyGradientLoss(
  sequences: readonly PolicyGradientSequence[],
  options: PolicyLossOptions,
  batchLossTokens?: number,
): TokenLoss {
  const ownTokens = sequences.reduce((total, sequence) => total + sequence.lossMask.reduce((sum, mask) => sum + mask, 0), 0);
  const denominator = Math.max(batchLossTokens ?? ownTokens, 1);
  const surrogate = (logprobs: tf.Tensor, proximal: tf.Tensor, advantages: tf.Tensor): tf.Tensor => {
    const ratio = tf.exp(tf.sub(logprobs, proximal));
    const unclipped = tf.neg(tf.mul(ratio, advantages));
    const clipped = tf.neg(tf.mul(tf.clipByValue(ratio, 1 - options.clipLow, 1 + options.clipHigh), advantages));
    return tf.maximum(unclipped, clipped);
  };
  const anchorCoefficient = options.anchorCoefficient ?? 0;
  return (tokenLogprobs, supportLogprobs, anchorLogprobs) => {
    const perSequence = tokenLogprobs.map((logprobs, index) => {
      const sequence = sequences[index];
      if (sequence === undefined || sequence.lossMask.length !== logprobs.shape[0]) {
        throw new RangeError(`sequence ${index}: the loss inputs do not match its ${logprobs.shape[0]} response tokens`);
      }
      const mask = tf.tensor1d(Float32Array.from(sequence.lossMask));
      const advantages = tf.tensor1d(Float32Array.from(sequence.advantages));
      const rollout = tf.tensor1d(Float32Array.from(sequence.rolloutLogprobs));
      if (sequence.proximalLogprobs !== undefined && sequence.proximalLogprobs.length !== sequence.lossMask.length) {
        throw new RangeError(`sequence ${index}: proximalLogprobs need one entry per response token`);
      }
      const proximal = sequence.proximalLogprobs === undefined ? stopGradient(logprobs) : tf.tensor1d(Float32Array.from(sequence.proximalLogprobs));
      const weight = tf.minimum(tf.exp(tf.sub(proximal, rollout)), options.importanceSamplingCap);
      let perToken = tf.mul(weight, surrogate(logprobs, proximal, advantages));
      if (options.klCoefficient > 0) {
        if (sequence.referenceLogprobs?.length !== sequence.lossMask.length) throw new RangeError('referenceLogprobs are needed when β > 0');
        const difference = tf.sub(tf.tensor1d(Float32Array.from(sequence.referenceLogprobs)), logprobs);
        const kl = tf.sub(tf.sub(tf.exp(difference), difference), 1);
        perToken = tf.add(perToken, tf.mul(kl, options.klCoefficient));
      }
      if (anchorCoefficient > 0) {
        const anchor = anchorLogprobs[index] ?? null;
        if (anchor === null || sequence.anchorNegativeEntropy?.length !== sequence.lossMask.length) {
          throw new RangeError(`sequence ${index}: the anchor's log-probs and negative entropies are needed when α > 0`);
        }
        const anchorKl = tf.sub(tf.tensor1d(Float32Array.from(sequence.anchorNegativeEntropy)), anchor);
        perToken = tf.add(perToken, tf.mul(anchorKl, anchorCoefficient));
      }
      const support = sequence.support;
      const supportValues = supportLogprobs[index] ?? null;
      if (support !== undefined && supportValues !== null) {
        const width = supportWidth(support.map((position) => position.advantages));
        if (support.length !== sequence.lossMask.length || supportValues.shape[1] !== width) {
          throw new RangeError(`sequence ${index}: the support advantages do not match its support log-probs`);
        }
        // Padded columns carry advantage 0, so they add nothing.
        const padded = support.flatMap((position) => Array.from({ length: width }, (_, column) => position.advantages[column] ?? 0));
        const supportAdvantages = tf.tensor2d(Float32Array.from(padded), [support.length, width]);
        const supportProximal = supportProximalOf(support, supportValues, width, index);
        perToken = tf.add(perToken, tf.sum(surrogate(supportValues, supportProximal, supportAdvantages), 1));
      }
      return tf.sum(tf.mul(perToken, mask));
    });
    const total = perSequence.length === 0 ? tf.scalar(0) : tf.addN(perSequence);
    return tf.div(total, denominator) as tf.Scalar;
  };
}
