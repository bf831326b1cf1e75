/**
 * What a training step hands the engine and reads back, as the trainer's loop uses it: each sample
 * as a datum with its advantages, the number form of the loss over what a pass saw, the later
 * passes' ℓ_old, and the sampler/trainer mismatch. Pure functions over the seam's types.
 */
import type { SampleAdvantages } from '../core/rl/advantages.js';
import { defaultPolicyLossOptions, policyLoss, type PolicyLossResult, type PolicyLossSequence, type SupportLossTerms } from '../core/rl/policy-loss.js';
import type { TrainingSample } from '../spec/records.js';
import type { ForwardBackwardOutput, TrainingDatum } from '../spec/training-engine.js';

export function datumOf(sample: TrainingSample, advantages: SampleAdvantages): TrainingDatum {
  return {
    promptTokenIds: sample.promptTokenIds,
    responseTokenIds: sample.responseTokenIds,
    lossMask: sample.lossMask,
    advantages: advantages.advantages,
    rolloutLogprobs: sample.rolloutLogprobs,
    temperature: sample.samplingTemperature,
    ...(advantages.support === null ? {} : { support: advantages.support }),
  };
}

/** The support terms of a datum for the step's metrics, when the engine reported their log-probs. */
function supportTermsOf(support: TrainingDatum['support'], logprobs: number[][] | null): { support?: SupportLossTerms[] } {
  if (support === undefined || logprobs === null) return {};
  return {
    support: support.map((target, position) => ({
      advantages: target.advantages,
      logprobs: logprobs[position] ?? [],
      ...(target.proximalLogprobs === undefined ? {} : { proximalLogprobs: target.proximalLogprobs }),
    })),
  };
}

/**
 * The number form of the loss over what one `forwardBackward` pass saw. A loss that takes the
 * rollout as the old policy (`decoupledFormOf`) is the decoupled form with ℓ_old = μ.
 */
export function lossInputsOf(data: readonly TrainingDatum[], output: ForwardBackwardOutput, proximalIsRollout: boolean): PolicyLossSequence[] {
  return data.map(({ support, ...datum }, index) => ({
    ...datum,
    ...(proximalIsRollout ? { proximalLogprobs: datum.rolloutLogprobs } : {}),
    logprobs: output.logprobs[index] ?? [],
    ...(output.referenceLogprobs === null ? {} : { referenceLogprobs: output.referenceLogprobs[index] ?? [] }),
    ...(output.anchorKl === null || output.anchorKl === undefined ? {} : { anchorKl: output.anchorKl[index] ?? [] }),
    ...supportTermsOf(support, output.supportLogprobs?.[index] ?? null),
  }));
}

/** A datum for a later pass: ℓ_old is what the first pass saw, for the sampled and the support tokens. */
export function withProximalLogprobs(datum: TrainingDatum, first: ForwardBackwardOutput, index: number): TrainingDatum {
  const supportLogprobs = first.supportLogprobs?.[index] ?? null;
  return {
    ...datum,
    proximalLogprobs: first.logprobs[index] ?? [],
    ...(datum.support === undefined || supportLogprobs === null
      ? {}
      : { support: datum.support.map((target, position) => ({ ...target, proximalLogprobs: supportLogprobs[position] ?? [] })) }),
  };
}

/**
 * exp(ℓ − μ) and |ℓ − μ| over the loss tokens, untruncated: how far trainer and sampler disagree.
 * The decoupled form reports it as its importance weight; a loss whose old policy is the rollout
 * has none (its ℓ_old − μ is 0), so it is worked out on its own.
 */
export function rolloutMismatchOf(data: readonly TrainingDatum[], output: ForwardBackwardOutput): Pick<PolicyLossResult, 'importanceRatio' | 'rolloutLogprobAbsoluteDifference'> {
  const options = { ...defaultPolicyLossOptions, importanceSamplingCap: Infinity, klCoefficient: 0, anchorCoefficient: 0 };
  // Without the terms' inputs the number form computes the sampled tokens' surrogate alone.
  return policyLoss(lossInputsOf(data, { ...output, referenceLogprobs: null, anchorKl: null, supportLogprobs: [] }, false), options);
}
