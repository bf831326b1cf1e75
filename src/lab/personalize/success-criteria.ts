/**
 * The two success measures of the personalization experiment, as pure functions.
 *
 * `sessionsToSuccess` is the goal: the served version's satisfaction rate on the held-out probe
 * is a step function of the session count (each probe holds until the next one), and success is
 * the first session after which it is at least the threshold until the end of the run.
 * `consecutiveCriterion` is the OpenClaw-RL paper's rule (3 consecutive sessions whose first
 * response satisfies the user); with a base rate near one third chance alone meets it, so it is
 * reported beside the goal, never used as the goal.
 */
import { consecutiveSessionsNeeded, successThreshold, type PersonalizeProbe, type PersonalizeSession } from './personalize-result.js';

/**
 * The first session count after which every probe rate stays at or above `threshold`, or null
 * when the last probe is below it (or there is none). Probes are ordered by `afterSession`
 * here, so callers may pass them in any order.
 */
export function sessionsToSuccess(
  probes: readonly Pick<PersonalizeProbe, 'afterSession' | 'satisfactionRate'>[],
  threshold = successThreshold,
): number | null {
  const ordered = [...probes].sort((left, right) => left.afterSession - right.afterSession);
  let success: number | null = null;
  for (let index = ordered.length - 1; index >= 0; index -= 1) {
    const probe = ordered[index] as (typeof ordered)[number];
    if (probe.satisfactionRate < threshold) break;
    success = probe.afterSession;
  }
  return success;
}

/**
 * The 1-based index of the session that completes the first run of `needed` consecutive
 * sessions whose first response satisfied the user, or null if no run is that long.
 */
export function consecutiveCriterion(
  sessions: readonly Pick<PersonalizeSession, 'index' | 'firstResponseSatisfied'>[],
  needed = consecutiveSessionsNeeded,
): number | null {
  const ordered = [...sessions].sort((left, right) => left.index - right.index);
  let run = 0;
  for (const session of ordered) {
    run = session.firstResponseSatisfied ? run + 1 : 0;
    if (run >= needed) return session.index;
  }
  return null;
}

/** The probe rate of the version served after `session` sessions (the latest probe up to it), or null before any probe. */
export function servedProbeRate(probes: readonly Pick<PersonalizeProbe, 'afterSession' | 'satisfactionRate'>[], session: number): number | null {
  let rate: number | null = null;
  let latest = -1;
  for (const probe of probes) {
    if (probe.afterSession <= session && probe.afterSession > latest) {
      latest = probe.afterSession;
      rate = probe.satisfactionRate;
    }
  }
  return rate;
}
