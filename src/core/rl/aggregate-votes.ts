/**
 * The one place a judge's votes on a turn become a reward. Two aggregations, one per kind of
 * reward, because the two rewards are used differently:
 *
 * - Live turns: the majority over the m readable votes, a tie giving 0 (OpenClaw-RL's binary RL).
 *   The judgement's score is the turn's whole reward r ∈ {−1, 0, +1}, so it should say one thing:
 *   a single vote that disagrees with the others at temperature 0.6 is noise, not a third of a
 *   verdict, and a reward on the feedback's own scale lets a person's thumbs override it like for like.
 * - Rollout turns: the mean of the readable votes, added to the episode's outcome as the
 *   integrated (step-wise) reward R_t = o + (1/m)·Σ_i r_i (OpenClaw-RL's process rewards). Here the
 *   process part only ranks a turn among the rollouts of its group at the same turn index (the
 *   trainer's group baseline takes the group's mean off), and the mean keeps what the majority
 *   throws away: 3 of 3 votes above 2 of 3, which separates turns a majority would tie.
 *
 * The rollout driver (`rollouts/run-rollout.ts`) sends the mean as the feedback's
 * `process_reward` and R_t as its `reward`; the trainer forms the advantage.
 */
import { meanOf } from '../mean-of.js';

export type VoteScore = 1 | -1 | 0;

export type ParsedVote = { score: VoteScore } | { score: null; reason: 'unparseable' };

export type AggregatedVotes =
  | { score: VoteScore; counts: { positive: number; negative: number; neutral: number }; dropped: number }
  | { score: null; reason: 'no-valid-votes'; dropped: number };

/**
 * A live turn's reward: the majority over the parseable votes; a tie for the top count gives 0 (as
 * in OpenClaw-RL). When no vote is parseable the result is `score: null` rather than OpenClaw-RL's
 * silent 0, so the caller can tell "the judge said unclear" from "the judge said nothing".
 */
export function aggregateVotes(votes: readonly ParsedVote[]): AggregatedVotes {
  const counts = { positive: 0, negative: 0, neutral: 0 };
  let dropped = 0;
  for (const vote of votes) {
    if (vote.score === 1) counts.positive += 1;
    else if (vote.score === -1) counts.negative += 1;
    else if (vote.score === 0) counts.neutral += 1;
    else dropped += 1;
  }
  if (counts.positive + counts.negative + counts.neutral === 0) return { score: null, reason: 'no-valid-votes', dropped };
  const ranked: [VoteScore, number][] = [
    [1, counts.positive],
    [-1, counts.negative],
    [0, counts.neutral],
  ];
  ranked.sort((a, b) => b[1] - a[1]);
  const [top, second] = ranked as [[VoteScore, number], [VoteScore, number]];
  return { score: top[1] === second[1] ? 0 : top[0], counts, dropped };
}

/** A rollout turn's process reward: the mean of the PRM's readable votes on it, null without one. */
export function meanVote(votes: readonly number[]): number | null {
  return meanOf(votes);
}

/** Which rewards a rollout trains on: the environment's outcome alone, or with the PRM's process rewards. */
export type RewardMode = 'outcome' | 'outcome+process';

/**
 * The integrated (step-wise) reward of rollout turn t: R_t = o + (1/m)·Σ_i r_i, the episode's
 * outcome reward o plus the mean of the PRM's m votes r_i ∈ {−1, 0, +1} on (a_t, s_{t+1}).
 * Without readable votes, or in outcome mode, R_t = o.
 */
export function integratedReward(outcome: number, processVotes: readonly number[], mode: RewardMode): number {
  if (mode === 'outcome') return outcome;
  return outcome + (meanVote(processVotes) ?? 0);
}
