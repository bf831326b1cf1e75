/**
 * What the dashboard reads of the record store beyond the other `RecordReads` methods: pages and
 * aggregates that each read an index range, so a page costs the same with 100 or 100k turns in
 * the store (`clawrl bench dashboard` measures it). `RecordReads` offers them as `dashboard`.
 */
import type { PolicyVersion } from './inference-engine.js';
import type { FeedbackRecord, JudgementRecord, SampleStatus, SessionStatus } from './records.js';

/** A session as the sessions list shows it: no turn ids, no messages. */
export interface SessionSummary {
  id: string;
  tenant: string | null;
  /** The user whose request opened it (`tenant/name`). */
  user: string | null;
  status: SessionStatus;
  createdAt: number;
  updatedAt: number;
  mainTurns: number;
  sideTurns: number;
}

/** Where a page of sessions continues: after the last session of the previous page. */
export interface SessionCursor {
  createdAt: number;
  id: string;
}

export interface ListSessionSummariesOptions {
  /** Sessions whose id starts with it, or whose tenant or user is it. */
  search?: string;
  /** Newest first, strictly older than this session. */
  after?: SessionCursor;
  limit: number;
  /** Only this tenant's sessions (a tenant key's view); absent, every session. */
  tenant?: string;
  /** Within the tenant, only this user's (a user's key's view). */
  user?: string;
}

export interface ActivitySeriesOptions {
  /** Epoch milliseconds, inclusive. */
  since: number;
  /** Epoch milliseconds, exclusive. */
  until: number;
  /** Bucket width in milliseconds; buckets start at multiples of it. */
  bucketMs: number;
}

/** One bucket of activity; only buckets with something in them are returned. */
export interface ActivityBucket {
  /** Start of the bucket, epoch milliseconds. */
  at: number;
  mainTurns: number;
  sideTurns: number;
  /** Judgements recorded in the bucket, and the mean of their readable scores (null without any). */
  judgements: number;
  meanScore: number | null;
  /** Readable verdict votes agreeing with their judgement's majority, out of all readable ones. */
  agreeingVotes: number;
  readableVotes: number;
}

/** Samples created in a bucket, by what became of them and where they came from. */
export interface SampleBucket {
  at: number;
  /** `rollout` for samples built on a rollout driver's feedback (`clawrl rollout`), else `live`. */
  source: string;
  ready: number;
  trained: number;
  /** Dropped as too stale for training. */
  stale: number;
  /** Dropped for any other reason (superseded, no hint, zero score, ...). */
  dropped: number;
}

/** A policy activation: from `at` on, serving was meant to use `version`. */
export interface PolicyActivation {
  version: PolicyVersion;
  at: number;
}

export interface ActivitySeries {
  buckets: ActivityBucket[];
  samples: SampleBucket[];
  /** The activation in force at `since` (if any), then every activation inside the window. */
  activations: PolicyActivation[];
}

/** How the turns a policy version served were judged. */
export interface PolicyTurnScore {
  version: PolicyVersion;
  /** Turns the version served whose latest sample carries a reward. */
  scoredTurns: number;
  meanScore: number | null;
}

/** A sample as a turn's judging shows it: what became of it, without its token arrays. */
export interface SampleSummary {
  id: string;
  status: SampleStatus;
  method: string;
  score: number | null;
  dropReason: string | null;
  policyVersion: PolicyVersion;
  judgementId: number | null;
  feedbackId: number | null;
}

/** What the judge, feedback and training made of one turn: the latest of each, null where there is none. */
export interface TurnJudgingSummary {
  turnId: string;
  /** With every vote's text, the hint candidates and how the hint was chosen among them. */
  judgement: JudgementRecord | null;
  /** The feedback that counts (the newest). */
  feedback: FeedbackRecord | null;
  sample: SampleSummary | null;
}

export interface DashboardQueries {
  /** Sessions, newest first, one index range per page (keyset, never an offset). */
  listSessionSummaries(options: ListSessionSummariesOptions): Promise<SessionSummary[]>;
  /** Turns, judgements, samples and activations of a time window, in buckets. */
  activitySeries(options: ActivitySeriesOptions): Promise<ActivitySeries>;
  /**
   * For each version in `from..to` that served a scored turn: how many, and their mean reward (the
   * latest sample's score of each turn: feedback where given, else the judge's).
   */
  policyTurnScores(options: { from: PolicyVersion; to: PolicyVersion }): Promise<PolicyTurnScore[]>;
  /**
   * The latest judgement, feedback and sample of each known turn among `turnIds` (a page of a
   * session), in the order of `turnIds`: one read for the page, never one per turn.
   */
  turnJudgings(turnIds: readonly string[]): Promise<TurnJudgingSummary[]>;
  /** What one tenant has in the store, for its own `/admin/status` (counted from the rows: a scan of its sessions and turns). */
  tenantCounts(tenant: string): Promise<TenantCounts>;
}

/** A tenant's sessions, turns and feedback. */
export interface TenantCounts {
  sessions: { open: number; closed: number };
  turns: { main: number; side: number };
  /** Feedback the tenant's key sent. */
  feedback: number;
}
