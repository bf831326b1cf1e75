/**
 * The canary watch's decision rule (docs/training.md, "The canary"): the cohort served the candidate
 * is compared with the sessions served the incumbent over the same period, on two signals — every
 * scored turn's reward (explicit feedback where given, else the judge's score) and explicit
 * feedback alone. The candidate is rolled back as soon as either signal of the canary, over at
 * least `minScored` turns, falls more than `margin` below the incumbent's; the incumbent's side is
 * its turns in the same period when it has `minScored` of them, else its whole service before the
 * canary (quiet periods), else neutral (0). After `lengthTurns` canary turns without a regression
 * the candidate becomes active.
 */
import { meanOf } from './mean-of.js';
import type { CanaryCohortSignal, PolicyCanaryEvidence } from '../spec/policy-version-state.js';

export interface CanaryWatchRuleOptions {
  /** Canary turns served before promotion; default 50. */
  lengthTurns: number;
  /** Largest drop of a mean (on the −1..1 scale) that is not a regression; default 0.25. */
  margin: number;
  /** Fewest scored turns of a signal before it is compared; default 5. */
  minScored: number;
}

export const defaultCanaryWatchRule: CanaryWatchRuleOptions = { lengthTurns: 50, margin: 0.25, minScored: 5 };

export function describeCanaryWatchRule(options: CanaryWatchRuleOptions): string {
  return (
    `roll back when the canary's mean reward or mean explicit feedback, over at least ${options.minScored} turns, falls more than ` +
    `${options.margin} below the incumbent's over the same period (else the incumbent's earlier service, else 0); ` +
    `promote after ${options.lengthTurns} canary turns without a regression`
  );
}

/** Where a signal of the incumbent is compared from, and its value. */
function baselineOf(
  period: CanaryCohortSignal,
  history: CanaryCohortSignal | null,
  pick: (signal: CanaryCohortSignal) => { count: number; mean: number | null },
  minScored: number,
): { mean: number; source: string } {
  const current = pick(period);
  if (current.count >= minScored && current.mean !== null) return { mean: current.mean, source: 'the same period' };
  const earlier = history === null ? null : pick(history);
  if (earlier !== null && earlier.count >= minScored && earlier.mean !== null) return { mean: earlier.mean, source: 'its earlier service' };
  return { mean: 0, source: 'neutral' };
}

export function decideCanary(
  canary: CanaryCohortSignal,
  incumbentPeriod: CanaryCohortSignal,
  incumbentHistory: CanaryCohortSignal | null,
  options: CanaryWatchRuleOptions = defaultCanaryWatchRule,
): Pick<PolicyCanaryEvidence, 'decision' | 'reason' | 'rule'> {
  const rule = describeCanaryWatchRule(options);
  const signals = [
    { name: 'mean reward', pick: (signal: CanaryCohortSignal) => ({ count: signal.scored, mean: signal.meanScore }) },
    { name: 'mean explicit feedback', pick: (signal: CanaryCohortSignal) => ({ count: signal.feedback, mean: signal.meanFeedback }) },
  ];
  for (const signal of signals) {
    const own = signal.pick(canary);
    if (own.count < options.minScored || own.mean === null) continue;
    const baseline = baselineOf(incumbentPeriod, incumbentHistory, signal.pick, options.minScored);
    if (own.mean < baseline.mean - options.margin) {
      return {
        decision: 'roll-back',
        rule,
        reason:
          `the canary's ${signal.name} ${own.mean.toFixed(3)} over ${own.count} turns fell more than ${options.margin} below ` +
          `the incumbent's ${baseline.mean.toFixed(3)} (${baseline.source})`,
      };
    }
  }
  if (canary.turns >= options.lengthTurns) {
    return { decision: 'promote', rule, reason: `${canary.turns} canary turns without a regression` };
  }
  return { decision: 'watching', rule, reason: `${canary.turns} of ${options.lengthTurns} canary turns, no regression so far` };
}

/** The signal of a set of turns: each turn's reward (null when unscored) and its explicit feedback (null when none). */
export function cohortSignalOf(turns: readonly { reward: number | null; feedback: number | null }[]): CanaryCohortSignal {
  const rewards = turns.flatMap((turn) => (turn.reward === null ? [] : [turn.reward]));
  const feedback = turns.flatMap((turn) => (turn.feedback === null ? [] : [turn.feedback]));
  return { turns: turns.length, scored: rewards.length, meanScore: meanOf(rewards), feedback: feedback.length, meanFeedback: meanOf(feedback) };
}
