/**
 * A leave-one-out reward baseline over one training batch (RLOO, Kool et al. 2019): each sample's
 * reward part w·r is taken relative to the mean reward of the batch's other rewarded samples,
 * b_i = mean_{j≠i}(r_j), which `core/rl/advantages.ts` subtracts from the reward: A_t = w·(r_i − b_i) + ….
 *
 * Why: binary RL puts r = ±1 on every response token. When a user's preference is rarely met most
 * samples are −1, and a step of only −1s pushes down the sampled replies' every token without
 * saying what is better (a TA run collapsed to ever shorter gradings on such steps, with right
 * verdicts). Against the batch's mean, a batch of equal rewards carries no reward gradient (only
 * the teacher's token-level gap remains), and a rare +1 among −1s weighs more than each −1.
 *
 * `negative` takes the baseline only where it is below zero, min(0, mean_{j≠i}(r_j)): a step that went
 * badly still trains on the difference, but no reply is pushed down harder than its own reward says.
 * Why: where most replies already please, `batch` weighs the one −1 by −2 against the three +1s, and
 * on a tiny full-parameter model that one strong push on a reply which shares most of its tokens with
 * the good ones undid a teacher run that had learned (0.88 → 0.62).
 *
 * Samples without a reward part (OPD samples, a null or 0 score) neither get a baseline nor count
 * in the others'; a sample with no rewarded peer has none.
 *
 * Rollout samples (`source: 'rollout'`) are exempt the same way: their score is already R less its
 * GRPO group's mean (`core/rl/group-advantages.ts`), so taking the batch's mean off it again would
 * baseline it twice, and against live rewards it was never compared with.
 */
import type { SampleMethod, SampleSource } from '../../spec/records.js';

export type RewardBaselineKind = 'none' | 'batch' | 'negative';

export interface BaselineSample {
  method: SampleMethod;
  score: number | null;
  /** Absent means `live`. */
  source?: SampleSource;
}

/** The reward a sample's advantage carries: none for OPD samples and for a null or 0 score. */
export function rewardOf(sample: BaselineSample): number | null {
  return sample.method === 'opd' || sample.score === null || sample.score === 0 ? null : sample.score;
}

/** Each sample's leave-one-out baseline (floored at zero for `negative`), null where it has none. */
export function rewardBaselines(samples: readonly BaselineSample[], kind: RewardBaselineKind): (number | null)[] {
  if (kind === 'none') return samples.map(() => null);
  const rewards = samples.map((sample) => (sample.source === 'rollout' ? null : rewardOf(sample)));
  const rewarded = rewards.filter((reward): reward is number => reward !== null);
  const total = rewarded.reduce((sum, reward) => sum + reward, 0);
  return rewards.map((reward) => {
    if (reward === null || rewarded.length < 2) return null;
    const mean = (total - reward) / (rewarded.length - 1);
    return kind === 'negative' ? Math.min(0, mean) : mean;
  });
}
