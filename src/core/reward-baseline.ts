/**
 * A leave-one-out reward baseline over one training batch (RLOO, Kool et al. 2019): each sample's
 * reward part w·r is taken relative to the mean reward of the batch's other rewarded samples,
 * A_t = a_t − w·mean_{j≠i}(r_j).
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
 * in the others'; a sample with no rewarded peer keeps its advantages.
 */

export type RewardBaselineKind = 'none' | 'batch' | 'negative';

export interface BaselineSample {
  method: 'rl' | 'opd' | 'combine';
  score: number | null;
  advantages: readonly number[];
}

function rewardOf(sample: BaselineSample): number | null {
  return sample.method === 'opd' || sample.score === null || sample.score === 0 ? null : sample.score;
}

/** Each sample's advantages with its leave-one-out baseline (floored at zero for `negative`) subtracted from the reward part `rlWeight·r`. */
export function applyRewardBaseline(samples: readonly BaselineSample[], kind: RewardBaselineKind, rlWeight: number): number[][] {
  if (kind === 'none') return samples.map((sample) => [...sample.advantages]);
  const rewards = samples.map(rewardOf);
  const rewarded = rewards.filter((reward): reward is number => reward !== null);
  const total = rewarded.reduce((sum, reward) => sum + reward, 0);
  return samples.map((sample, index) => {
    const reward = rewards[index] ?? null;
    if (reward === null || rewarded.length < 2) return [...sample.advantages];
    const mean = (total - reward) / (rewarded.length - 1);
    const baseline = kind === 'negative' ? Math.min(0, mean) : mean;
    return sample.advantages.map((advantage) => advantage - rlWeight * baseline);
  });
}
