/**
 * The `JudgingQueue` role of the record store: what the judge worker does — claim queued turns
 * under a lease, record judgements and the samples built from them, hand the turns back.
 * A `RecordStore` plays it; the turn log (`turn-log.ts`) fills the queue.
 *
 * A queued turn stays queued until a worker releases it as done for its latest queueing; workers
 * hold it under a lease, so a crashed worker's turns become claimable again when the lease
 * expires. Nothing ever drops a queued turn.
 */
import type { JudgeClaim, JudgementRecord, NewJudgement, NewSample, SampleRecord } from './records.js';

export interface ClaimTurnsOptions {
  limit: number;
  leaseMs: number;
  now: number;
  workerId: string;
}

/** How a worker hands a claimed turn back. */
export type ReleaseOutcome =
  /** Processed: the turn leaves the queue unless it was queued again meanwhile. */
  | { kind: 'done' }
  /** Failed: stays queued, claimable again from `retryAt`, with one more attempt counted. */
  | { kind: 'failed'; error: string; retryAt: number };

export interface ReleaseTurnOptions {
  turnId: string;
  workerId: string;
  /** The claim's generation. */
  generation: number;
  outcome: ReleaseOutcome;
}

export interface JudgingQueue {
  /**
   * Claims up to `limit` queued turns that are due (`retryAt` passed) and not under a live lease,
   * oldest queued first, and leases them to `workerId` until `now + leaseMs`.
   */
  claimTurnsForJudging(options: ClaimTurnsOptions): Promise<JudgeClaim[]>;
  /**
   * Hands a claimed turn back. Returns false, changing nothing, when the worker no longer holds
   * the lease (it expired and another worker claimed the turn). Releasing as done an outdated
   * generation ends the lease but keeps the turn queued.
   */
  releaseTurn(options: ReleaseTurnOptions): Promise<boolean>;
  /**
   * Records a judgement. One judgement is kept per (judge, judge model, prompt version) and turn:
   * recording the same identity again replaces it. The turn's current judgement is its latest.
   * Fails with `store_error` for an unknown turn.
   */
  recordJudgement(judgement: NewJudgement): Promise<JudgementRecord>;
  /**
   * Records a sample of a turn. The turn's earlier `ready` samples become `dropped` with reason
   * `superseded`: a turn has at most one ready sample. Fails with `store_error` for an unknown
   * turn, a duplicate id, or per-token arrays of a ready sample that do not match the response.
   */
  recordSample(sample: NewSample): Promise<SampleRecord>;
}
