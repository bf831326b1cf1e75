/**
 * The `TrainingQueue` role of the record store: what the trainer does with ready samples — lease
 * them, drop the unusable ones, and commit a step. A `RecordStore` plays it; the judging queue
 * (`judging-queue.ts`) fills it, and a commit writes the policy registry (`policy-registry.ts`).
 *
 * A crashed trainer's samples become claimable again when the lease expires, or when it releases
 * its own leases on restart. A step commits in one write: the new policy version with its
 * artifact, the step record, the used samples marked `trained`, and the version activated.
 */
import type { NewPolicyVersion, NewTrainingStep, TrainingSample, TrainingStepRecord } from './records.js';

export interface ClaimSamplesOptions {
  limit: number;
  leaseMs: number;
  now: number;
  workerId: string;
  /** Only this user's samples (null: samples without a user); absent, anyone's. */
  user?: string | null;
}

/** How many unleased ready samples one user has (null: samples without a user). */
export interface ReadySamplesOfUser {
  user: string | null;
  ready: number;
}

export interface CommitTrainingStepOptions {
  step: NewTrainingStep;
  version: NewPolicyVersion;
  /** The trainer holding the samples' leases. */
  workerId: string;
  /**
   * `active` (the default) activates the version at once; `candidate` records it for the gate
   * and leaves serving as it is.
   */
  state?: 'active' | 'candidate';
}

export interface TrainingQueue {
  /**
   * Leases up to `limit` ready samples that are not under a live lease, oldest first, to
   * `workerId` until `now + leaseMs`. Their status stays `ready` until a step commits them.
   */
  claimSamplesForTraining(options: ClaimSamplesOptions): Promise<TrainingSample[]>;
  /**
   * Ends `workerId`'s leases on the given samples (all of its leases when `ids` is omitted)
   * without changing their status; returns how many were released.
   */
  releaseTrainingSamples(input: { workerId: string; ids?: string[] }): Promise<number>;
  /** The unleased ready samples at `now`, counted per user (samples without a user first, then by user): what a per-user trainer picks from. */
  readySamplesByUser(now: number): Promise<ReadySamplesOfUser[]>;
  /**
   * Moves `ready` samples to `trained` or `dropped` (with a reason); other samples are left
   * alone. Returns how many changed.
   */
  updateSampleStatus(input: { ids: string[]; status: 'trained' | 'dropped'; reason?: string; at: number }): Promise<number>;
  /**
   * In one write: records the version and the step, marks the step's samples `trained` (those
   * still `ready`), ends their leases and activates the version (or records it as a candidate). Fails with `store_error`, writing
   * nothing, when the version or the step number exists already.
   */
  commitTrainingStep(options: CommitTrainingStepOptions): Promise<TrainingStepRecord>;
}
