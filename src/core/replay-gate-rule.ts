/**
 * The replay gate's decision rule (docs/training.md, "The replay gate"): the candidate and the
 * incumbent each answered the same held-out recorded prompts, the judge scored each answer, and
 * each prompt is a pair won by the higher score (equal scores tie). The candidate is promoted when
 *
 *   1. at least `minTurns` pairs were judged,
 *   2. it won more pairs than it lost by at least `margin` of all pairs: (W − L) / N ≥ margin, and
 *   3. the one-sided sign test over the decisive pairs says so: P[X ≥ W | X ~ Bin(W + L, ½)] ≤ alpha.
 *
 * Otherwise the incumbent stays (ties, too little evidence and "no better" all keep it): a version
 * has to show it is better before it serves anyone. A sign test uses only which answer won, so a
 * judge whose scores are coarse (−1, 0, 1) or drift in scale decides as well as a fine one.
 */
import { meanOf } from './mean-of.js';
import type { PolicyGateEvidence, PolicyGateItem } from '../spec/policy-version-state.js';

export interface ReplayGateRuleOptions {
  /** Least (W − L) / N; default 0.05. */
  margin: number;
  /** Largest one-sided sign-test p-value; default 0.25. */
  alpha: number;
  /** Fewest judged pairs to decide on at all; default 8. */
  minTurns: number;
}

export const defaultReplayGateRule: ReplayGateRuleOptions = { margin: 0.05, alpha: 0.25, minTurns: 8 };

/** Which answer a pair prefers; scores within 1e-9 tie. */
export function preferenceOf(candidate: number, incumbent: number): PolicyGateItem['preferred'] {
  if (Math.abs(candidate - incumbent) <= 1e-9) return 'tie';
  return candidate > incumbent ? 'candidate' : 'incumbent';
}

/** P[X ≥ wins] for X ~ Binomial(wins + losses, ½); null without a decisive pair. */
export function signTestPValue(wins: number, losses: number): number | null {
  const trials = wins + losses;
  if (trials === 0) return null;
  // Summed in log space: C(n, k) / 2^n underflows past n ≈ 1000 otherwise.
  let logChoose = 0;
  let total = 0;
  for (let successes = 0; successes <= trials; successes += 1) {
    if (successes > 0) logChoose += Math.log(trials - successes + 1) - Math.log(successes);
    if (successes >= wins) total += Math.exp(logChoose - trials * Math.LN2);
  }
  return Math.min(1, total);
}

export function describeReplayGateRule(options: ReplayGateRuleOptions): string {
  return (
    `promote when at least ${options.minTurns} held-out turns were judged, (wins − losses) / turns ≥ ${options.margin}, ` +
    `and the one-sided sign test over decisive pairs gives p ≤ ${options.alpha}; otherwise (ties included) the incumbent stays`
  );
}


export type ReplayGateDecision = Pick<
  PolicyGateEvidence,
  'decision' | 'reason' | 'rule' | 'turns' | 'wins' | 'losses' | 'ties' | 'pValue' | 'candidateMeanScore' | 'incumbentMeanScore'
>;

export function decideReplayGate(items: readonly PolicyGateItem[], options: ReplayGateRuleOptions = defaultReplayGateRule): ReplayGateDecision {
  const wins = items.filter((item) => item.preferred === 'candidate').length;
  const losses = items.filter((item) => item.preferred === 'incumbent').length;
  const turns = items.length;
  const pValue = signTestPValue(wins, losses);
  const counts = {
    rule: describeReplayGateRule(options),
    turns,
    wins,
    losses,
    ties: turns - wins - losses,
    pValue,
    candidateMeanScore: meanOf(items.map((item) => item.candidate)),
    incumbentMeanScore: meanOf(items.map((item) => item.incumbent)),
  };
  const reject = (reason: string): ReplayGateDecision => ({ ...counts, decision: 'reject', reason });
  if (turns < options.minTurns) return reject(`only ${turns} held-out turns were judged; the gate needs ${options.minTurns}`);
  const lead = (wins - losses) / turns;
  if (lead < options.margin) {
    return reject(`won ${wins}, lost ${losses}, tied ${counts.ties} of ${turns}: a lead of ${lead.toFixed(3)} is below the margin ${options.margin}`);
  }
  if (pValue === null || pValue > options.alpha) {
    return reject(`won ${wins}, lost ${losses}: sign-test p ${pValue === null ? '–' : pValue.toFixed(3)} is above ${options.alpha}`);
  }
  return { ...counts, decision: 'promote', reason: `won ${wins}, lost ${losses}, tied ${counts.ties} of ${turns} (p ${pValue.toFixed(3)})` };
}
