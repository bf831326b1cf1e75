/**
 * GRPO advantages within a group: the N rollouts of one task. Each rollout's reward at turn t is
 * compared with the other rollouts' rewards at the same turn index (OpenClaw-RL's step-wise
 * grouping; a single-turn environment has one index), A = R − mean, optionally divided by the
 * standard deviation. A turn index at which every rollout of the group got the same reward gives
 * no learning signal at all: its turns are dropped (advantage null) and counted, not trained on
 * with A = 0, which would only dilute the batch. A rollout's turns past the group's other rollouts'
 * lengths are compared with whoever reached that index; alone there, they are dropped too.
 */
import { meanVote } from './aggregate-votes.js';

export interface GroupAdvantageOptions {
  /** Divide by the standard deviation (classic GRPO); default false (mean only, "Dr. GRPO"). */
  normalizeStd?: boolean;
  /** Added to the deviation before dividing (default 1e-6). */
  epsilon?: number;
}

export interface GroupAdvantagesResult {
  /** Per rollout, per turn: the advantage, or null when the turn was dropped. */
  advantages: (number | null)[][];
  /** Turn indices at which the whole group agreed (dropped). */
  zeroVarianceIndices: number;
  /** Turn indices with at least two rollouts compared. */
  indices: number;
  /** True when no turn of the group carries an advantage. */
  zeroVariance: boolean;
}

const tolerance = 1e-9;

/** `rewards[rollout][turn]`: the integrated reward of each turn of each rollout of one group. */
export function groupAdvantages(rewards: readonly (readonly number[])[], options: GroupAdvantageOptions = {}): GroupAdvantagesResult {
  const epsilon = options.epsilon ?? 1e-6;
  const advantages = rewards.map((turns) => turns.map((): number | null => null));
  const longest = Math.max(0, ...rewards.map((turns) => turns.length));
  let zeroVarianceIndices = 0;
  let indices = 0;
  for (let index = 0; index < longest; index += 1) {
    const members = rewards.flatMap((turns, rollout) => (index < turns.length ? [{ rollout, reward: turns[index] as number }] : []));
    if (members.length < 2) continue;
    indices += 1;
    const mean = members.reduce((sum, member) => sum + member.reward, 0) / members.length;
    const variance = members.reduce((sum, member) => sum + (member.reward - mean) ** 2, 0) / members.length;
    if (variance <= tolerance) {
      zeroVarianceIndices += 1;
      continue;
    }
    const scale = options.normalizeStd === true ? Math.sqrt(variance) + epsilon : 1;
    for (const member of members) (advantages[member.rollout] as (number | null)[])[index] = (member.reward - mean) / scale;
  }
  const zeroVariance = advantages.every((turns) => turns.every((advantage) => advantage === null));
  return { advantages, zeroVarianceIndices, indices, zeroVariance };
}

/**
 * Whether the process rewards can change a group's advantages at all: true when, at some turn
 * index, two rollouts of the group got different process rewards (the mean of their readable
 * votes; a turn without one counts as 0, as `integratedReward` adds nothing for it). A PRM whose
 * votes do not depend on the turn, such as a style judge asked about arithmetic, only shifts every
 * reward by the same amount, which the group mean takes out again: outcome+process then trains as
 * outcome does, and the driver says so instead of letting it pass for process supervision.
 */
export function processRewardsVary(votes: readonly (readonly (readonly number[])[])[]): boolean {
  return !groupAdvantages(votes.map((turns) => turns.map((turn) => meanVote(turn) ?? 0))).zeroVariance;
}
