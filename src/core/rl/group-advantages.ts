/**
 * GRPO within a group: the N rollouts of one task. Each rollout's reward at turn t is compared
 * with the other rollouts' rewards at the same turn index (OpenClaw-RL's step-wise grouping; a
 * single-turn environment has one index): A = R − mean, or (R − mean) / (std + ε) when the
 * recipe's `groupNormalizeStd` is on (classic GRPO; off is "Dr. GRPO", which does not weigh a
 * nearly unanimous group up to the same size as a split one). The advantage is not clamped: once
 * divided by the deviation, |A| > 1 is the usual case for the minority of a group (a lone success
 * among eight is (1 − 1/8) / 0.33 ≈ 2.6), and cutting it would weigh the rare success like a common one.
 *
 * A comparison set whose rewards all agree gives no learning signal: every member's advantage is
 * exactly 0, which the trainer drops and counts (`samplesZeroAdvantage`). A turn past the group's
 * other rollouts' lengths is compared with whoever reached that index; alone there, it has none either.
 *
 * The trainer uses `groupBaseline` through `core/rl/reward-baseline.ts`; `groupAdvantages` lays
 * the same rule over a step's episodes, for the rollout driver's counts of what will carry a signal.
 */
import { meanVote } from './aggregate-votes.js';

export interface GroupAdvantageOptions {
  /** Divide by the standard deviation (classic GRPO); default false (mean only, "Dr. GRPO"). */
  normalizeStd?: boolean;
  /** Added to the deviation before dividing (default 1e-6). */
  epsilon?: number;
}

const tolerance = 1e-9;

/**
 * The baseline and scale of one comparison set (the rewards of a group's rollouts at one turn
 * index): A_i = (R_i − baseline) / scale. Null when the set compares nothing: fewer than two
 * rewards, or all of them equal (within 1e-9, so a mean's rounding cannot pass for a signal).
 */
export function groupBaseline(rewards: readonly number[], options: GroupAdvantageOptions = {}): { baseline: number; scale: number } | null {
  if (rewards.length < 2) return null;
  const mean = rewards.reduce((sum, reward) => sum + reward, 0) / rewards.length;
  const variance = rewards.reduce((sum, reward) => sum + (reward - mean) ** 2, 0) / rewards.length;
  if (variance <= tolerance) return null;
  return { baseline: mean, scale: options.normalizeStd === true ? Math.sqrt(variance) + (options.epsilon ?? 1e-6) : 1 };
}

export interface GroupAdvantagesResult {
  /** Per rollout, per turn: the advantage, or null when the turn compares nothing. */
  advantages: (number | null)[][];
  /** Turn indices at which the whole group agreed. */
  zeroVarianceIndices: number;
  /** Turn indices with at least two rollouts compared. */
  indices: number;
  /** True when no turn of the group carries an advantage. */
  zeroVariance: boolean;
}

/** `rewards[rollout][turn]`: the integrated reward of each turn of each rollout of one group. */
export function groupAdvantages(rewards: readonly (readonly number[])[], options: GroupAdvantageOptions = {}): GroupAdvantagesResult {
  const advantages = rewards.map((turns) => turns.map((): number | null => null));
  const longest = Math.max(0, ...rewards.map((turns) => turns.length));
  let zeroVarianceIndices = 0;
  let indices = 0;
  for (let index = 0; index < longest; index += 1) {
    const members = rewards.flatMap((turns, rollout) => (index < turns.length ? [{ rollout, reward: turns[index] as number }] : []));
    if (members.length < 2) continue;
    indices += 1;
    const shift = groupBaseline(members.map((member) => member.reward), options);
    if (shift === null) {
      zeroVarianceIndices += 1;
      continue;
    }
    for (const member of members) (advantages[member.rollout] as (number | null)[])[index] = (member.reward - shift.baseline) / shift.scale;
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
