/**
 * The per-token advantages of one training batch: the algorithm's whole choice of what each token
 * is pushed by, in one place. The judge stores what it measured (the reward r and the teacher's
 * gaps Δ, `core/rl/build-samples.ts`); the trainer alone turns them into advantages, with its own
 * weights, clip and baseline, so nothing the judge or a rollout client was started with has to be
 * repeated here. Per sample i and response token t, with the reward term ρ_i = (r_i − b_i) / s_i
 * (`core/rl/reward-baseline.ts`: a rollout group's mean, optionally over its deviation, or the
 * recipe's batch baseline; ρ = r without one) and δ_t = clip(Δ_t, −C, C):
 *
 *   rl        A_t = ρ
 *   opd       A_t = δ_t
 *   combine   A_t = w_rl·ρ + w_opd·δ_t          (r = 0 without a score, δ = 0 without a hint)
 *
 * With a support set the distillation leaves the sampled token (δ_t = 0) for the set: each token
 * v of position t gets s·w_v·clip(Δ_v, −C, C), with s = 1 for opd and w_opd for combine, and w_v
 * the student's probability renormalized over the set.
 *
 * A sample judged before samples stored their reward and gaps apart carries the advantages the
 * judge combined then (`judgedAdvantages`); it keeps them, less w_rl·b as the trainer took it
 * before (such samples have no group, so s = 1).
 *
 * A sample whose every advantage comes out 0 pushes nothing; `hasSignal` tells the trainer, which
 * drops and counts it rather than train on it.
 */
import type { JudgedAdvantages, SampleGroup, SampleMethod, SupportToken } from '../../spec/records.js';
import { clipValue } from './build-samples.js';
import { rewardBaselines, type RewardBaselineKind, type RewardShift } from './reward-baseline.js';

export interface AdvantageOptions {
  /** w_rl: the reward's weight in combine samples (`--rl-weight`). */
  rlWeight: number;
  /** w_opd: the distillation term's weight in combine samples (`--opd-weight`). */
  opdWeight: number;
  /** C: the teacher's gap is clipped to [−C, C] (`--opd-clip`). */
  opdClip: number;
  /** The reward baseline of samples without a group, over the batch (recipe `rewardBaseline`). */
  rewardBaseline: RewardBaselineKind;
  /** A group's reward differences over its standard deviation (recipe `groupNormalizeStd`). */
  groupNormalizeStd: boolean;
}

export const defaultAdvantageOptions: AdvantageOptions = { rlWeight: 1, opdWeight: 1, opdClip: 1, rewardBaseline: 'none', groupNormalizeStd: false };

/** What `advantagesOf` reads of a sample. */
export interface AdvantageSample {
  method: SampleMethod;
  score: number | null;
  /** The rollout group the reward is compared within; absent or null for none. */
  group?: SampleGroup | null;
  /** One entry per response token: its length is the response's. */
  lossMask: readonly number[];
  distillationGaps: readonly number[] | null;
  support: readonly (readonly SupportToken[])[] | null;
  judgedAdvantages: JudgedAdvantages | null;
}

/** Per response position, the support tokens that carry an advantage and the advantage on each. */
export interface SupportAdvantages {
  tokenIds: number[];
  advantages: number[];
}

export interface SampleAdvantages {
  /** One per response token. */
  advantages: number[];
  /** Per response position; null without a support set. */
  support: SupportAdvantages[] | null;
}

/** How much of the reward and of the distillation each method trains on. */
const methodWeights: { readonly [M in SampleMethod]: (options: AdvantageOptions) => { reward: number; distillation: number } } = {
  rl: () => ({ reward: 1, distillation: 0 }),
  opd: () => ({ reward: 0, distillation: 1 }),
  combine: (options) => ({ reward: options.rlWeight, distillation: options.opdWeight }),
};

function supportAdvantagesOf(support: readonly (readonly SupportToken[])[], scale: number, clip: number): SupportAdvantages[] {
  return support.map((position) => {
    const kept = position.filter((token): token is SupportToken & { gap: number } => token.gap !== null);
    return { tokenIds: kept.map((token) => token.id), advantages: kept.map((token) => scale * token.weight * clipValue(token.gap, clip)) };
  });
}

function judgedAdvantagesOf(judged: JudgedAdvantages, shift: RewardShift | null, rlWeight: number): SampleAdvantages {
  return {
    advantages: shift === null ? [...judged.advantages] : judged.advantages.map((advantage) => advantage - rlWeight * shift.baseline),
    support: judged.support === null ? null : judged.support.map((position) => ({ tokenIds: [...position.tokenIds], advantages: [...position.advantages] })),
  };
}

/** The advantages of each sample of `batch`, in its order. */
export function advantagesOf(batch: readonly AdvantageSample[], options: AdvantageOptions = defaultAdvantageOptions): SampleAdvantages[] {
  const shifts = rewardBaselines(batch, { kind: options.rewardBaseline, groupNormalizeStd: options.groupNormalizeStd });
  return batch.map((sample, index) => {
    const shift = shifts[index] ?? null;
    if (sample.judgedAdvantages !== null) return judgedAdvantagesOf(sample.judgedAdvantages, shift, options.rlWeight);
    const weights = methodWeights[sample.method](options);
    const reward = weights.reward === 0 ? 0 : (sample.score ?? 0);
    const rewardTerm = shift === null ? reward : (reward - shift.baseline) / shift.scale;
    // With a support set the distillation is on the set, the sampled token included when the
    // student ranked it in its top k.
    const gaps = sample.support === null ? sample.distillationGaps : null;
    const advantages = sample.lossMask.map((_, position) => {
      const distillation = gaps === null ? 0 : clipValue(gaps[position] ?? 0, options.opdClip);
      return weights.reward * rewardTerm + weights.distillation * distillation;
    });
    return { advantages, support: sample.support === null ? null : supportAdvantagesOf(sample.support, weights.distillation, options.opdClip) };
  });
}

/** Whether a sample's advantages push anything: some token, sampled or in its support set, has a non-zero one. */
export function hasSignal(advantages: SampleAdvantages): boolean {
  return advantages.advantages.some((value) => value !== 0) || (advantages.support?.some((position) => position.advantages.some((value) => value !== 0)) ?? false);
}
