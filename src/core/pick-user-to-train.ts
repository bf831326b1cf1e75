/**
 * Which user's lineage a per-user trainer (`--policy-scope user`) trains next, and the quotas that
 * keep one busy user from taking the trainer from the rest. Users take turns: among those with
 * enough ready samples and steps left today, the one trained least recently goes first (never
 * trained before anyone trained), ties by name, so a user who sends ten times the traffic still
 * gets one step per round, not ten. The global lineage (samples without a user, `user` null) is
 * one more user here. Pure: the trainer reads the counts and versions and hands them over.
 */

/** Quotas per user, each lineage's own. */
export interface UserQuotas {
  /** Steps a lineage may take in any 24 hours (`--user-steps-per-day`). */
  stepsPerDay: number;
  /** Ready samples a user keeps waiting for the trainer (`--user-samples-kept`); older ones are dropped. */
  samplesKept: number;
}

/**
 * 48 steps a day is one every half hour on average, more than a person's feedback fills at the
 * default 16 samples a step; 256 samples kept are 16 steps' worth, so a user back from a busy
 * day trains on recent turns, not on a backlog the policy has moved past.
 */
export const defaultUserQuotas: UserQuotas = { stepsPerDay: 48, samplesKept: 256 };

const dayMs = 24 * 60 * 60 * 1000;

/** What the trainer knows of one lineage when it picks. */
export interface UserTrainingCandidate {
  /** The user (`tenant/name`); null for the global lineage. */
  user: string | null;
  /** Unleased ready samples. */
  ready: number;
  /** When its last step committed (epoch ms); null when it never trained. */
  lastTrainedAt: number | null;
  /** Steps it committed in the 24 hours before now. */
  stepsToday: number;
}

/** A lineage's training so far, from its versions. */
export interface UserTrainingActivity {
  lastTrainedAt: number | null;
  stepsToday: number;
}

/**
 * Each lineage's last step and its steps in the 24 hours before `now`, from the versions the
 * steps committed (`step` set; the base and versions recorded by hand are no steps).
 */
export function trainingActivityOf(
  versions: readonly { user: string | null; step: number | null; createdAt: number }[],
  now: number,
): Map<string | null, UserTrainingActivity> {
  const activity = new Map<string | null, UserTrainingActivity>();
  for (const version of versions) {
    if (version.step === null) continue;
    const entry = activity.get(version.user) ?? { lastTrainedAt: null, stepsToday: 0 };
    entry.lastTrainedAt = Math.max(entry.lastTrainedAt ?? version.createdAt, version.createdAt);
    if (version.createdAt > now - dayMs) entry.stepsToday += 1;
    activity.set(version.user, entry);
  }
  return activity;
}

/** Orders null (never, or the global lineage) before any value. */
function compareNullsFirst<Value extends number | string>(left: Value | null, right: Value | null): number {
  if (left === right) return 0;
  if (left === null) return -1;
  if (right === null) return 1;
  return left < right ? -1 : 1;
}

/**
 * The lineage to train next: at least `minimumReady` ready samples and steps left today, trained
 * least recently; null when none qualifies.
 */
export function pickUserToTrain(
  candidates: readonly UserTrainingCandidate[],
  options: { minimumReady: number; stepsPerDay: number },
): UserTrainingCandidate | null {
  const eligible = candidates.filter((candidate) => candidate.ready >= Math.max(1, options.minimumReady) && candidate.stepsToday < options.stepsPerDay);
  eligible.sort((left, right) => compareNullsFirst(left.lastTrainedAt, right.lastTrainedAt) || compareNullsFirst(left.user, right.user));
  return eligible[0] ?? null;
}

/** How many of a user's oldest ready samples go (`user-quota`) so the newest `samplesKept` stay. */
export function readySamplesOverQuota(ready: number, samplesKept: number): number {
  return Math.max(0, ready - samplesKept);
}
