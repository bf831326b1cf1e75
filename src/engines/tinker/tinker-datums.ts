/**
 * clawrl's `TrainingDatum`s as Tinker Datums, and each clawrl loss as one of Tinker's loss
 * functions (`engines.md` §5.4). Tinker sums its per-token loss over every target position; the
 * seam sums over loss tokens and divides by `batchLossTokens`. So prompt positions get advantage 0
 * (and log-prob 0, never read), and each response position's advantage is A·m/N, which makes
 * Tinker's sum the seam's loss: both `importance_sampling` (−exp(ℓ − μ)·A) and `ppo`
 * (−min(r·A, clip(r)·A)) are linear in A with a non-negative factor.
 *
 * `decoupled_ppo` without its KL, anchor and support terms is Tinker's `ppo` taken against ℓ_old
 * instead of μ, with each advantage scaled by the truncated importance weight
 * w = min(exp(ℓ_old − μ), C): w·max(−ρ·A, −clip(ρ)·A) = max(−ρ·wA, −clip(ρ)·wA) since w ≥ 0. ℓ_old
 * is the datum's `proximalLogprobs`, or the trainer's current log-probs (read by a `forward` call
 * first, on the same weights the `forward_backward` then sees).
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { TrainingDatum, TrainingLoss } from '../../spec/training-engine.js';
import type { WireLossFunction } from './tinker-api.js';

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

/** Rejects data or loss terms Tinker cannot compute, and malformed data, before anything is sent. */
export function checkTinkerBatch(data: readonly TrainingDatum[], loss: TrainingLoss): void {
  if (data.length === 0) throw new ClawrlError('invalid_request', 'forwardBackward needs at least one datum');
  if (loss.name === 'decoupled_ppo') {
    if (loss.klCoefficient > 0) throw new ClawrlError('unsupported', 'Tinker does not compute reference log-probs: the KL term (--kl-coefficient > 0) needs the local trainer', { param: 'klCoefficient' });
    if ((loss.anchorCoefficient ?? 0) > 0) throw new ClawrlError('unsupported', "Tinker does not return the base model's top-k: the anchor (--anchor-coefficient > 0) needs the local trainer", { param: 'anchorCoefficient' });
  }
  for (const datum of data) {
    const length = datum.responseTokenIds.length;
    if (length === 0 || datum.promptTokenIds.length === 0) throw new ClawrlError('invalid_request', 'a training datum needs a prompt and a response');
    if ([datum.lossMask, datum.advantages, datum.rolloutLogprobs].some((values) => values.length !== length)) {
      throw new ClawrlError('invalid_request', 'lossMask, advantages and rolloutLogprobs need one entry per response token');
    }
    if (datum.proximalLogprobs !== undefined && datum.proximalLogprobs.length !== length) throw new ClawrlError('invalid_request', 'proximalLogprobs need one entry per response token');
    if (datum.support !== undefined) throw new ClawrlError('unsupported', 'Tinker trains only the sampled tokens: OPD support sets (--opd-support-k) need the local trainer');
    if (datum.proximalLogprobs !== undefined && loss.name !== 'decoupled_ppo') {
      throw new ClawrlError('unsupported', `the ${loss.name} loss takes the rollout as the old policy: data with proximalLogprobs need decoupled_ppo`);
    }
    // Tinker's trainer scores under the model's own distribution (temperature 1): a ratio against
    // log-probs sampled at another temperature would compare two different distributions.
    if (datum.temperature !== 1) {
      throw new ClawrlError('unsupported', `Tinker trains at temperature 1, this sample was drawn at ${datum.temperature}: sample at temperature 1 to train on Tinker`, { param: 'temperature' });
    }
  }
}

/** Whether the batch needs ℓ_old from the service before the loss can be expressed. */
export function needsCurrentLogprobs(data: readonly TrainingDatum[], loss: TrainingLoss): boolean {
  return loss.name === 'decoupled_ppo' && data.some((datum) => datum.proximalLogprobs === undefined && datum.advantages.some((advantage, index) => advantage * (datum.lossMask[index] ?? 0) !== 0));
}

/** A batch as Tinker computes it: per sequence, one target log-prob and advantage per position after the first. */
export interface TinkerBatch {
  lossFunction: WireLossFunction;
  /** `ppo`'s ε (sent as the ratio bounds 1 − clipLow, 1 + clipHigh). */
  clip: { clipLow: number; clipHigh: number } | null;
  sequences: { tokens: number[]; logprobs: number[]; advantages: number[] }[];
}

/**
 * The wire form of a batch. `currentLogprobs` (per datum, one per response token) stands in for
 * ℓ_old where a `decoupled_ppo` datum has no `proximalLogprobs`.
 */
export function tinkerBatchOf(data: readonly TrainingDatum[], loss: TrainingLoss, batchLossTokens: number, currentLogprobs: readonly (readonly number[])[] | null): TinkerBatch {
  const sequences = data.map((datum, index) => {
    const prompt = datum.promptTokenIds.length;
    const old = datum.proximalLogprobs ?? currentLogprobs?.[index] ?? datum.rolloutLogprobs;
    const responseLogprobs = loss.name === 'decoupled_ppo' ? old : datum.rolloutLogprobs;
    const weights = datum.rolloutLogprobs.map((rollout, position) => (loss.name === 'decoupled_ppo' ? Math.min(Math.exp((old[position] ?? 0) - rollout), loss.importanceSamplingCap) : 1));
    const advantages = datum.advantages.map((advantage, position) => ((weights[position] ?? 1) * advantage * (datum.lossMask[position] ?? 0)) / batchLossTokens);
    // Target j is token j + 1 of the sequence: the first response token is target prompt − 1.
    const padding = Array.from({ length: prompt - 1 }, () => 0);
    return { tokens: [...datum.promptTokenIds, ...datum.responseTokenIds], logprobs: [...padding, ...responseLogprobs], advantages: [...padding, ...advantages] };
  });
  if (loss.name === 'importance_sampling') return { lossFunction: 'importance_sampling', clip: null, sequences };
  return { lossFunction: 'ppo', clip: { clipLow: loss.clipLow, clipHigh: loss.clipHigh }, sequences };
}

/** The response part of a datum's target log-probs. */
export function responseLogprobsOf(datum: TrainingDatum, targetLogprobs: readonly number[]): number[] {
  const start = datum.promptTokenIds.length - 1;
  const values = targetLogprobs.slice(start, start + datum.responseTokenIds.length);
  if (values.length !== datum.responseTokenIds.length) throw new ClawrlError('upstream_error', `Tinker returned ${targetLogprobs.length} log-probs for a datum of ${start + 1 + datum.responseTokenIds.length} tokens`);
  return values;
}

/** Tinker's loss of a batch from the target log-probs it returned, where a service reports no `loss:sum`. */
export function tinkerLossOf(batch: TinkerBatch, targetLogprobs: readonly (readonly number[])[]): number {
  // Without a config, Tinker's default ratio bounds (0.8, 1.2).
  const low = 1 - (batch.clip?.clipLow ?? 0.2);
  const high = 1 + (batch.clip?.clipHigh ?? 0.2);
  return sum(
    batch.sequences.map((sequence, index) => {
      const sampled = sequence.logprobs;
      const advantages = sequence.advantages;
      return sum(
        advantages.map((advantage, position) => {
          if (advantage === 0) return 0;
          const ratio = Math.exp((targetLogprobs[index]?.[position] ?? 0) - (sampled[position] ?? 0));
          if (batch.lossFunction === 'importance_sampling') return -ratio * advantage;
          return Math.max(-ratio * advantage, -Math.min(Math.max(ratio, low), high) * advantage);
        }),
      );
    }),
  );
}

export const lossTokensOf = (data: readonly TrainingDatum[]) => sum(data.map((datum) => sum(datum.lossMask)));
