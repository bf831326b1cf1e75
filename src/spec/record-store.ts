/**
 * The `RecordStore` seam: durable sessions, turns, the judge queue, judgements, feedback and
 * samples (and, as the RL loop grows, training steps and policy versions). Implementations:
 * SQLite (embedded default) and Postgres. Every implementation runs `runRecordStoreContract` from `record-store.contract.ts`.
 *
 * Durability contract: when a write method's promise resolves, the write survives `kill -9` of
 * the process.
 *
 * Judge queue: linking a trainable main turn's next state queues it for judging, and so does
 * feedback on a trainable main turn (with or without a next state). A queued turn stays queued
 * until a worker releases it as done for its latest queueing; workers hold it under a lease, so a
 * crashed worker's turns become claimable again when the lease expires. Nothing ever drops a
 * queued turn. A session's last turn never gets a next state: it is judged only from feedback.
 *
 * Training: the trainer claims ready samples under a lease (a crashed trainer's samples become
 * claimable again when the lease expires, or when it releases its own leases on restart) and
 * commits a step in one write: the new policy version with its artifact, the step record, the
 * used samples marked `trained`, and the version activated. Policy versions are immutable; which
 * one serving uses is the latest activation, so a rollback is just another activation.
 *
 * Storage contract: a session's shared message prefix and shared token prefix are stored once,
 * so a session's storage grows linearly with its length, not quadratically. Stores may also share
 * a prefix across sessions (the SQLite and Postgres stores share an agent's system prompt); every
 * turn's ids still rebuild exactly.
 */
import type { ChatMessage } from './chat.js';
import type { DashboardQueries } from './dashboard-queries.js';
import type {
  FeedbackRecord,
  JudgeClaim,
  JudgementRecord,
  NewFeedback,
  NewJudgement,
  NewPolicyVersion,
  NewSample,
  NewTrainingStep,
  PolicyArtifactKind,
  PolicyVersionRecord,
  NewTurn,
  SampleRecord,
  SampleStatus,
  SessionCloseReason,
  SessionRecord,
  SessionStatus,
  StoreCounts,
  TrainingSample,
  TrainingStepRecord,
  TurnRecord,
} from './records.js';
import type { PolicyVersion } from './inference-engine.js';

/** Enough of a turn to decide whether a request continues it. */
export interface TurnReference {
  id: string;
  replyKey: string | null;
  /** Whether its next state is linked already. */
  linked: boolean;
}

export interface ListSessionsOptions {
  status?: SessionStatus;
  /** Newest first; default 100. */
  limit?: number;
  offset?: number;
}

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

export interface ListSamplesOptions {
  status?: SampleStatus;
  turnId?: string;
  /** Oldest first; default 100. */
  limit?: number;
  offset?: number;
}

export interface ListTurnIdsOptions {
  /** Turns that started at or after this time. */
  since?: number;
  /** Only main turns whose next state is linked. */
  linkedOnly?: boolean;
  /** Oldest first; default 100. */
  limit?: number;
  offset?: number;
}

export interface ClaimSamplesOptions {
  limit: number;
  leaseMs: number;
  now: number;
  workerId: string;
}

export interface CommitTrainingStepOptions {
  step: NewTrainingStep;
  version: NewPolicyVersion;
  /** The trainer holding the samples' leases. */
  workerId: string;
}

/** Where training stands, for `/admin/status` and a trainer resuming after a restart. */
export interface TrainingSummary {
  steps: number;
  lastStep: TrainingStepRecord | null;
  /** The version serving should use; null before any version is recorded. */
  activeVersion: PolicyVersion | null;
  /** The highest recorded version; null before any. */
  latestVersion: PolicyVersion | null;
}

export interface RecordStore {
  /** The dashboard's paged and bucketed reads (`dashboard-queries.ts`). */
  readonly dashboard: DashboardQueries;
  /**
   * Creates the session if it does not exist, re-opens it if closed, and touches `updatedAt`.
   * Returns nothing: it runs on every request, and `getSession` builds the full record.
   */
  upsertSession(input: { id: string; tenant: string | null; at: number }): Promise<void>;
  getSession(id: string): Promise<SessionRecord | null>;
  listSessions(options?: ListSessionsOptions): Promise<SessionRecord[]>;
  /** Closes an open session; a no-op returning false if it is already closed or unknown. */
  closeSession(id: string, reason: SessionCloseReason, at: number): Promise<boolean>;
  /** Closes every open session last touched before `idleSince`; returns their ids. */
  closeIdleSessions(idleSince: number, at: number): Promise<string[]>;

  /**
   * Records a turn. Main turns get the next per-session `index`. Fails with a `store_error` for a
   * duplicate id or an unknown session.
   */
  recordTurn(turn: NewTurn): Promise<TurnRecord>;
  getTurn(id: string): Promise<TurnRecord | null>;
  /**
   * The known turns among `ids`, in the order of `ids`, each once: what reading many turns needs
   * without a round trip per turn (`clawrl samples export --with-turns`).
   */
  getTurns(ids: readonly string[]): Promise<TurnRecord[]>;
  /**
   * The session's latest main turn, whatever its status, as a reference: what linking the next
   * state needs, without rebuilding the turn (`getTurn` does that).
   */
  getLastMainTurn(sessionId: string): Promise<TurnReference | null>;
  /**
   * Sets a main turn's next state (the messages that followed it) and, for a trainable turn,
   * queues it for judging in the same write. Returns false if the turn is unknown or already
   * linked: the first link wins.
   */
  linkNextState(turnId: string, nextState: ChatMessage[], at: number): Promise<boolean>;
  /** The open session whose turn recorded `replyKey`, with that turn's id; null when none. */
  findByReplyKey(replyKey: string): Promise<{ sessionId: string; turnId: string } | null>;

  /** Turn ids, oldest first (what `clawrl rejudge` walks). */
  listTurnIds(options?: ListTurnIdsOptions): Promise<string[]>;

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
  /** The turn's judgements, oldest first. */
  listJudgements(turnId: string): Promise<JudgementRecord[]>;
  /**
   * Records feedback on a turn and, for a trainable main turn, queues it again so its sample is
   * rebuilt. Returns null, recording nothing, for an unknown turn.
   */
  recordFeedback(feedback: NewFeedback): Promise<FeedbackRecord | null>;
  /** The turn's latest feedback: the one that counts for training. */
  getFeedback(turnId: string): Promise<FeedbackRecord | null>;
  /** Every feedback on the turn, oldest first (the last is `getFeedback`'s); empty for an unknown turn. */
  listFeedback(turnId: string): Promise<FeedbackRecord[]>;

  /**
   * Records a sample of a turn. The turn's earlier `ready` samples become `dropped` with reason
   * `superseded`: a turn has at most one ready sample. Fails with `store_error` for an unknown
   * turn, a duplicate id, or per-token arrays of a ready sample that do not match the response.
   */
  recordSample(sample: NewSample): Promise<SampleRecord>;
  listSamples(options?: ListSamplesOptions): Promise<SampleRecord[]>;
  /**
   * Moves `ready` samples to `trained` or `dropped` (with a reason); other samples are left
   * alone. Returns how many changed.
   */
  updateSampleStatus(input: {
    ids: string[];
    status: 'trained' | 'dropped';
    reason?: string;
    at: number;
  }): Promise<number>;

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
  /**
   * Records a policy version that no step produced (the base, version 0) and, with `activate`,
   * activates it. Fails with `store_error` for an existing version.
   */
  recordPolicyVersion(version: NewPolicyVersion, options: { activate: boolean }): Promise<PolicyVersionRecord>;
  /**
   * In one write: records the version and the step, marks the step's samples `trained` (those
   * still `ready`), ends their leases and activates the version. Fails with `store_error`, writing
   * nothing, when the version or the step number exists already.
   */
  commitTrainingStep(options: CommitTrainingStepOptions): Promise<TrainingStepRecord>;
  /** Makes `version` the one serving uses; false, changing nothing, for an unknown version. */
  activatePolicyVersion(version: PolicyVersion, at: number): Promise<boolean>;
  /** Every version, ascending (the base first). */
  listPolicyVersions(): Promise<PolicyVersionRecord[]>;
  /** A version's artifact; null for an unknown version. */
  getPolicyArtifact(version: PolicyVersion): Promise<{ kind: PolicyArtifactKind; files: Record<string, Uint8Array> } | null>;
  /** Steps, newest first; default 100. */
  listTrainingSteps(options?: { limit?: number; offset?: number }): Promise<TrainingStepRecord[]>;
  trainingSummary(): Promise<TrainingSummary>;
  /** The version that served the session's first turn (what a pinned session keeps); null when none. */
  getSessionPolicyVersion(sessionId: string): Promise<PolicyVersion | null>;

  counts(): Promise<StoreCounts>;
  /** Flushes and closes. Idempotent. */
  close(): Promise<void>;
}
