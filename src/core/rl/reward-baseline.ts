/**
 * What each sample's reward is measured against. `core/rl/advantages.ts` turns a sample's reward r
 * into its reward term (r − b) / s with the baseline b and scale s chosen here; without a baseline
 * the term is r itself. Two rules, by whether the sample names a group:
 *
 * 1. A sample of a rollout group (`SampleGroup`: the rollouts of one task in one step, posted with
 *    their rewards by `clawrl rollout`) is compared within its group at its turn index (GRPO,
 *    OpenClaw-RL's step-wise grouping): b = the mean reward of the group's samples at that index,
 *    s = 1, or s = std + ε with the recipe's `groupNormalizeStd` (classic GRPO; off is "Dr. GRPO").
 *    A comparison set whose rewards all agree, or a turn no other rollout of the group reached,
 *    gives every member a reward term of exactly 0: nothing to prefer. Nothing else is subtracted:
 *    a group exists to be compared within, and live rewards were never drawn from its task. The
 *    trainer claims groups whole (`claimSamplesForTraining`), so the group in the batch is all of it.
 *
 * 2. Every other sample (live traffic, a rollout posted without a group) takes the recipe's
 *    `rewardBaseline`, over the batch's other ungrouped rewarded samples:
 *    - `none`: b = 0.
 *    - `batch`: a leave-one-out baseline (RLOO, Kool et al. 2019), b_i = mean_{j≠i}(r_j). Why: binary
 *      RL puts r = ±1 on every response token. When a user's preference is rarely met most samples
 *      are −1, and a step of only −1s pushes down the sampled replies' every token without saying
 *      what is better (a TA run collapsed to ever shorter gradings on such steps, with right
 *      verdicts). Against the batch's mean, a batch of equal rewards carries no reward gradient
 *      (only the teacher's token-level gap remains), and a rare +1 among −1s weighs more than each −1.
 *    - `negative`: that mean only where it is below zero, min(0, mean_{j≠i}(r_j)): a step that went
 *      badly still trains on the difference, but no reply is pushed down harder than its own reward
 *      says. Why: where most replies already please, `batch` weighs the one −1 by −2 against the
 *      three +1s, and on a tiny full-parameter model that one strong push on a reply which shares
 *      most of its tokens with the good ones undid a teacher run that had learned (0.88 → 0.62).
 *    A sample with no rewarded ungrouped peer has no baseline.
 *
 * Samples without a reward part (OPD samples, a null score) neither get a baseline nor count in the
 * others'. A reward of 0 is a reward like any other: against a baseline it has a direction.
 */
import type { SampleGroup, SampleMethod } from '../../spec/records.js';
import { groupBaseline } from './group-advantages.js';

export type RewardBaselineKind = 'none' | 'batch' | 'negative';

export interface RewardBaselineOptions {
  /** The baseline of samples without a group (recipe `rewardBaseline`). */
  kind: RewardBaselineKind;
  /** Divide a group's reward differences by the group's standard deviation (recipe `groupNormalizeStd`). */
  groupNormalizeStd: boolean;
}

export interface BaselineSample {
  method: SampleMethod;
  score: number | null;
  /** Absent or null: the sample belongs to no rollout group. */
  group?: SampleGroup | null;
}

/** The reward term of a sample is (r − baseline) / scale. */
export interface RewardShift {
  baseline: number;
  scale: number;
}

/** The reward a sample's advantage carries: none for OPD samples and for a null score. */
function rewardOf(sample: BaselineSample): number | null {
  return sample.method === 'opd' ? null : sample.score;
}

function groupKeyOf(group: SampleGroup): string {
  return `${group.turnIndex}\u0000${group.id}`;
}

function groupShifts(samples: readonly BaselineSample[], rewards: readonly (number | null)[], normalizeStd: boolean): Map<string, RewardShift | null> {
  const members = new Map<string, number[]>();
  samples.forEach((sample, index) => {
    const reward = rewards[index] ?? null;
    if (sample.group == null || reward === null) return;
    const key = groupKeyOf(sample.group);
    const rewardsOfKey = members.get(key);
    if (rewardsOfKey === undefined) members.set(key, [reward]);
    else rewardsOfKey.push(reward);
  });
  return new Map([...members].map(([key, groupRewards]) => [key, groupBaseline(groupRewards, { normalizeStd })]));
}

/** Each sample's baseline and scale, null where its reward is taken as it is. */
export function rewardBaselines(samples: readonly BaselineSample[], options: RewardBaselineOptions): (RewardShift | null)[] {
  const rewards = samples.map(rewardOf);
  const groups = groupShifts(samples, rewards, options.groupNormalizeStd);
  const ungrouped = samples.flatMap((sample, index) => (sample.group == null ? [rewards[index] ?? null] : [])).filter((reward): reward is number => reward !== null);
  const total = ungrouped.reduce((sum, reward) => sum + reward, 0);
  return samples.map((sample, index): RewardShift | null => {
    const reward = rewards[index] ?? null;
    if (reward === null) return null;
    if (sample.group != null) {
      // No comparison within the group: the reward term is exactly 0.
      return groups.get(groupKeyOf(sample.group)) ?? { baseline: reward, scale: 1 };
    }
    if (options.kind === 'none' || ungrouped.length < 2) return null;
    const mean = (total - reward) / (ungrouped.length - 1);
    return { baseline: options.kind === 'negative' ? Math.min(0, mean) : mean, scale: 1 };
  });
}
