/**
 * The trainer's objective, as plain numbers: the reference the tensor implementation
 * (`src/model/policy-gradient-loss.ts`) is checked against, and what step metrics are computed
 * with. Per loss token t of a sample, with ℓ the trainer's log-prob under the weights being
 * trained, ℓ_old the trainer's own log-prob before the update (a constant), μ the rollout
 * log-prob the sampler recorded and A the token's advantage:
 *
 *   ρ_t = exp(ℓ_t − ℓ_old,t)                                PPO ratio
 *   w_t = min(exp(ℓ_old,t − μ_t), C)                       truncated importance weight (TIS)
 *   pg_t = w_t · max(−ρ_t·A_t, −clip(ρ_t, 1 − ε_lo, 1 + ε_hi)·A_t)
 *   kl_t = exp(ℓ_ref,t − ℓ_t) − (ℓ_ref,t − ℓ_t) − 1         k3 estimate of KL(π ‖ π_base)
 *   an_t = Σ_k q_k·(log q_k − ℓ_k)                          the anchor: KL(q ‖ π) over the base's top K
 *   L = Σ_t m_t·(pg_t + β·kl_t + α·an_t + sp_t) / Σ_t m_t   over every token of the batch
 *
 * where sp_t is the OPD support-set term (OpenClaw-RL v2; `core/rl/build-samples.ts`), zero without
 * one: for each token v of the position's set, with its advantage A_v and ρ_v = exp(ℓ_v − ℓ_old,v),
 * max(−ρ_v·A_v, −clip(ρ_v, 1 − ε_lo, 1 + ε_hi)·A_v), summed over the set. It has no importance
 * weight: the set is every likely token, not a sample of one.
 *
 * The anchor (α > 0) holds the policy to the base model's distribution where the base puts its
 * mass: q_k are the base's probabilities of its K likeliest tokens at the position, ℓ_k the
 * policy's log-probs of the same tokens. It is 0 while the policy is the base, and its gradient,
 * −α·Σ_k q_k·∇ℓ_k, pulls back only where the policy has moved. Unlike kl_t, which sees the one
 * sampled token, it compares whole distributions, so a few samples cannot move the many positions
 * no reward is about.
 *
 * The weight w corrects for the sampler and the trainer being different engines or versions (a
 * sample may be up to `maxStaleness` versions old); truncating it at C bounds the variance a
 * very unlikely rollout token could add. Token-level aggregation (one denominator for the whole
 * batch) gives long and short responses the same weight per token, unlike OpenClaw-RL's mean of
 * per-sample means. With one optimizer step per batch ρ is 1 where the loss is evaluated, so the
 * clip fraction is 0 unless the proximal log-probs come from an earlier update.
 */
import type { PolicyVersion } from '../../spec/inference-engine.js';
import type { TrainingLoss } from '../../spec/training-engine.js';

export interface PolicyLossOptions {
  /** ε_lo: the ratio is clipped below at 1 − ε_lo. Default 0.2. */
  clipLow: number;
  /** ε_hi: the ratio is clipped above at 1 + ε_hi. Default 0.28. */
  clipHigh: number;
  /** C: importance weights above it are truncated to it. Default 2. */
  importanceSamplingCap: number;
  /** β: weight of the KL to the base model. Default 0 (no reference pass at all). */
  klCoefficient: number;
  /** α: weight of the anchor to the base model's top tokens. Default 0 (no anchor). */
  anchorCoefficient?: number;
  /** K: how many of the base model's likeliest tokens the anchor compares at each position. Default 8. */
  anchorTopK?: number;
}

/** How many of the base model's likeliest tokens the anchor compares at each position (`--anchor-top-k`). */
export const defaultAnchorTopK = 8;

export const defaultPolicyLossOptions: PolicyLossOptions = { clipLow: 0.2, clipHigh: 0.28, importanceSamplingCap: 2, klCoefficient: 0, anchorCoefficient: 0, anchorTopK: defaultAnchorTopK };

/** One sample's per-response-token inputs; every array has one entry per response token. */
export interface PolicyLossSequence {
  /** ℓ: the trainer's log-probs under the weights being trained. */
  logprobs: readonly number[];
  /** ℓ_old; defaults to `logprobs` (one optimizer step per batch). */
  proximalLogprobs?: readonly number[];
  /** μ: the log-probs the response was sampled with. */
  rolloutLogprobs: readonly number[];
  advantages: readonly number[];
  /** m: 1 for tokens the loss sees, 0 for the rest (fractional weights are allowed). */
  lossMask: readonly number[];
  /** ℓ_ref: the base model's log-probs; needed only when β > 0. */
  referenceLogprobs?: readonly number[];
  /** Per response token, the support set's advantages and the trainer's log-probs of those tokens. */
  support?: readonly SupportLossTerms[];
  /** an_t per response token; needed only when α > 0. */
  anchorKl?: readonly number[];
}

export interface SupportLossTerms {
  advantages: readonly number[];
  logprobs: readonly number[];
  /** ℓ_old of the same tokens; defaults to `logprobs`. */
  proximalLogprobs?: readonly number[];
}

/** sp_t: the clipped surrogate summed over one position's support set. */
export function supportLossTerm(terms: SupportLossTerms, options: PolicyLossOptions): number {
  let sum = 0;
  terms.advantages.forEach((advantage, index) => {
    const logprob = terms.logprobs[index] ?? 0;
    sum += clippedSurrogate(Math.exp(logprob - (terms.proximalLogprobs?.[index] ?? logprob)), advantage, options).value;
  });
  return sum;
}

export interface PolicyLossResult {
  loss: number;
  policyGradientLoss: number;
  /** Σ m·kl / Σ m; null when β = 0. */
  kl: number | null;
  /** Σ m·an / Σ m; null when α = 0. */
  anchorKl: number | null;
  clipFraction: number;
  importanceRatio: { mean: number; min: number; max: number; truncatedFraction: number };
  rolloutLogprobAbsoluteDifference: number;
  /** Σ m over the batch. */
  lossTokens: number;
}

export function clip(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

/** max(−ρ·A, −clip(ρ, 1 − ε_lo, 1 + ε_hi)·A), and whether the clipped side won. */
function clippedSurrogate(ratio: number, advantage: number, options: PolicyLossOptions): { value: number; clipped: boolean } {
  const unclipped = -ratio * advantage;
  const clippedTerm = -clip(ratio, 1 - options.clipLow, 1 + options.clipHigh) * advantage;
  return { value: Math.max(unclipped, clippedTerm), clipped: clippedTerm > unclipped };
}

/** The per-token loss terms of one token, before masking. */
export function policyLossTerms(
  token: { logprob: number; proximalLogprob: number; rolloutLogprob: number; advantage: number; referenceLogprob?: number },
  options: PolicyLossOptions,
): { policyGradient: number; clipped: boolean; importanceRatio: number; importanceWeight: number; kl: number } {
  const ratio = Math.exp(token.logprob - token.proximalLogprob);
  const importanceRatio = Math.exp(token.proximalLogprob - token.rolloutLogprob);
  const importanceWeight = Math.min(importanceRatio, options.importanceSamplingCap);
  const surrogate = clippedSurrogate(ratio, token.advantage, options);
  const difference = token.referenceLogprob === undefined ? 0 : token.referenceLogprob - token.logprob;
  return {
    policyGradient: importanceWeight * surrogate.value,
    clipped: surrogate.clipped,
    importanceRatio,
    importanceWeight,
    kl: Math.exp(difference) - difference - 1,
  };
}

export function policyLoss(sequences: readonly PolicyLossSequence[], options: PolicyLossOptions = defaultPolicyLossOptions): PolicyLossResult {
  const useKl = options.klCoefficient > 0;
  const anchorCoefficient = options.anchorCoefficient ?? 0;
  const useAnchor = anchorCoefficient > 0;
  let anchorSum = 0;
  let lossTokens = 0;
  let policyGradientSum = 0;
  let klSum = 0;
  let clippedSum = 0;
  let ratioSum = 0;
  let truncatedSum = 0;
  let differenceSum = 0;
  let ratioMin = Number.POSITIVE_INFINITY;
  let ratioMax = Number.NEGATIVE_INFINITY;
  for (const sequence of sequences) {
    const length = sequence.logprobs.length;
    for (const [name, values] of Object.entries({
      rolloutLogprobs: sequence.rolloutLogprobs,
      advantages: sequence.advantages,
      lossMask: sequence.lossMask,
      proximalLogprobs: sequence.proximalLogprobs ?? sequence.logprobs,
    })) {
      if (values.length !== length) throw new RangeError(`${name} has ${values.length} entries for ${length} tokens`);
    }
    if (useKl && sequence.referenceLogprobs?.length !== length) throw new RangeError('referenceLogprobs are needed for every token when β > 0');
    if (useAnchor && sequence.anchorKl?.length !== length) throw new RangeError('anchorKl is needed for every token when α > 0');
    if (sequence.support !== undefined && sequence.support.length !== length) throw new RangeError(`support has ${sequence.support.length} entries for ${length} tokens`);
    for (let index = 0; index < length; index += 1) {
      const mask = sequence.lossMask[index] ?? 0;
      if (mask === 0) continue;
      const logprob = sequence.logprobs[index] ?? 0;
      const proximalLogprob = sequence.proximalLogprobs?.[index] ?? logprob;
      const rolloutLogprob = sequence.rolloutLogprobs[index] ?? 0;
      const terms = policyLossTerms(
        {
          logprob,
          proximalLogprob,
          rolloutLogprob,
          advantage: sequence.advantages[index] ?? 0,
          ...(useKl ? { referenceLogprob: sequence.referenceLogprobs?.[index] ?? 0 } : {}),
        },
        options,
      );
      const support = sequence.support?.[index];
      lossTokens += mask;
      policyGradientSum += mask * (terms.policyGradient + (support === undefined ? 0 : supportLossTerm(support, options)));
      klSum += mask * terms.kl;
      if (useAnchor) anchorSum += mask * (sequence.anchorKl?.[index] ?? 0);
      clippedSum += terms.clipped ? mask : 0;
      ratioSum += mask * terms.importanceRatio;
      truncatedSum += terms.importanceRatio > options.importanceSamplingCap ? mask : 0;
      differenceSum += mask * Math.abs(proximalLogprob - rolloutLogprob);
      ratioMin = Math.min(ratioMin, terms.importanceRatio);
      ratioMax = Math.max(ratioMax, terms.importanceRatio);
    }
  }
  const mean = (sum: number) => (lossTokens === 0 ? 0 : sum / lossTokens);
  const policyGradientLoss = mean(policyGradientSum);
  const kl = useKl ? mean(klSum) : null;
  const anchorKl = useAnchor ? mean(anchorSum) : null;
  return {
    loss: policyGradientLoss + (kl === null ? 0 : options.klCoefficient * kl) + (anchorKl === null ? 0 : anchorCoefficient * anchorKl),
    policyGradientLoss,
    kl,
    anchorKl,
    clipFraction: mean(clippedSum),
    importanceRatio: {
      mean: lossTokens === 0 ? 1 : mean(ratioSum),
      min: lossTokens === 0 ? 1 : ratioMin,
      max: lossTokens === 0 ? 1 : ratioMax,
      truncatedFraction: mean(truncatedSum),
    },
    rolloutLogprobAbsoluteDifference: mean(differenceSum),
    lossTokens,
  };
}

/**
 * How many versions behind a sample is: versions are published in increasing order, so it is the
 * number of versions published since the one that sampled it (never negative; after a rollback a
 * sample of the rolled-back-to version counts its distance to the newest version).
 */
export function stalenessOf(sampleVersion: PolicyVersion, newestVersion: PolicyVersion): number {
  return Math.max(0, newestVersion - sampleVersion);
}

/** Splits samples into those at most `maxStaleness` versions old and the rest (dropped and counted). */
export function partitionByStaleness<Sample extends { policyVersion: PolicyVersion }>(
  samples: readonly Sample[],
  newestVersion: PolicyVersion,
  maxStaleness: number,
): { fresh: Sample[]; stale: Sample[] } {
  const fresh: Sample[] = [];
  const stale: Sample[] = [];
  for (const sample of samples) (stalenessOf(sample.policyVersion, newestVersion) > maxStaleness ? stale : fresh).push(sample);
  return { fresh, stale };
}

/**
 * Every named loss (`spec/training-engine.ts`) as the decoupled objective above with some terms
 * fixed, so one implementation computes all of them: Tinker's `ppo` and `importance_sampling` take
 * the rollout as the proximal policy (ℓ_old = μ, so the importance weight is 1), and
 * `importance_sampling` has no clip (its bounds are infinite). Neither has the KL or the anchor.
 */
export function decoupledFormOf(loss: TrainingLoss): { options: PolicyLossOptions; proximalIsRollout: boolean } {
  switch (loss.name) {
    case 'decoupled_ppo':
      return {
        options: {
          clipLow: loss.clipLow,
          clipHigh: loss.clipHigh,
          importanceSamplingCap: loss.importanceSamplingCap,
          klCoefficient: loss.klCoefficient,
          anchorCoefficient: loss.anchorCoefficient ?? 0,
          anchorTopK: loss.anchorTopK ?? defaultAnchorTopK,
        },
        proximalIsRollout: false,
      };
    case 'ppo':
      return { options: { clipLow: loss.clipLow, clipHigh: loss.clipHigh, importanceSamplingCap: 1, klCoefficient: 0, anchorCoefficient: 0 }, proximalIsRollout: true };
    case 'importance_sampling':
      return { options: { clipLow: Infinity, clipHigh: Infinity, importanceSamplingCap: 1, klCoefficient: 0, anchorCoefficient: 0 }, proximalIsRollout: true };
  }
}

/** The named loss (`--loss`) with the trainer's settings: each takes the options its definition has. */
export function trainingLossOf(name: TrainingLoss['name'], options: PolicyLossOptions): TrainingLoss {
  switch (name) {
    case 'decoupled_ppo':
      return {
        name,
        clipLow: options.clipLow,
        clipHigh: options.clipHigh,
        importanceSamplingCap: options.importanceSamplingCap,
        klCoefficient: options.klCoefficient,
        anchorCoefficient: options.anchorCoefficient ?? 0,
        anchorTopK: options.anchorTopK ?? defaultAnchorTopK,
      };
    case 'ppo':
      return { name, clipLow: options.clipLow, clipHigh: options.clipHigh };
    case 'importance_sampling':
      return { name };
  }
}
