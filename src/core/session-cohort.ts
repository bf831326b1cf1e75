/**
 * Deterministic cohorts of sessions by a hash of the session id, so every process (and every restart)
 * puts a session in the same cohort without sharing state: the replay gate's held-out slice (sessions
 * never trained on) and the canary cohort (sessions served the candidate). Each cohort hashes with
 * its own salt, so the two are independent: a held-out session is as likely to be in the canary as
 * any other.
 */

/** The cohorts clawrl draws; the name is the hash's salt. */
export type SessionCohort = 'held-out' | 'canary';

/** FNV-1a of the UTF-16 code units of `salt:text`, as an unsigned 32-bit integer. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  }
  // A final avalanche (murmur3's), so ids that differ in their last character spread over the whole range.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/** Where the session falls in [0, 1) for `cohort`; the same for the same id and cohort, everywhere. */
export function cohortPosition(cohort: SessionCohort, sessionId: string): number {
  return fnv1a(`${cohort}:${sessionId}`) / 2 ** 32;
}

/** Whether the session belongs to the `share` (0..1) of sessions in `cohort`. */
export function inSessionCohort(cohort: SessionCohort, sessionId: string, share: number): boolean {
  return share > 0 && cohortPosition(cohort, sessionId) < share;
}
