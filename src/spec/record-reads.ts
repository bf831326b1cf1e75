/**
 * The `RecordReads` role of the record store: the read models of the admin routes, the dashboard
 * and the offline commands (`clawrl samples export`, `clawrl rejudge`). Reads only; a
 * `RecordStore` plays it.
 */
import type { DashboardQueries } from './dashboard-queries.js';
import type {
  FeedbackRecord,
  JudgementRecord,
  SampleRecord,
  SampleStatus,
  SessionRecord,
  SessionStatus,
  StoreCounts,
  TrainingStepRecord,
  TurnRecord,
} from './records.js';

export interface ListSessionsOptions {
  status?: SessionStatus;
  /** Only this tenant's sessions (a tenant key's view); absent, every session. */
  tenant?: string;
  /** Only this user's sessions (`tenant/name`). */
  user?: string;
  /** Newest first; default 100. */
  limit?: number;
  offset?: number;
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

export interface RecordReads {
  /** The dashboard's paged and bucketed reads (`dashboard-queries.ts`). */
  readonly dashboard: DashboardQueries;
  getSession(id: string): Promise<SessionRecord | null>;
  listSessions(options?: ListSessionsOptions): Promise<SessionRecord[]>;
  getTurn(id: string): Promise<TurnRecord | null>;
  /**
   * The known turns among `ids`, in the order of `ids`, each once: what reading many turns needs
   * without a round trip per turn (`clawrl samples export --with-turns`).
   */
  getTurns(ids: readonly string[]): Promise<TurnRecord[]>;
  /** Turn ids, oldest first (what `clawrl rejudge` walks). */
  listTurnIds(options?: ListTurnIdsOptions): Promise<string[]>;
  /** The turn's judgements, oldest first. */
  listJudgements(turnId: string): Promise<JudgementRecord[]>;
  /** The turn's latest feedback: the one that counts for training. */
  getFeedback(turnId: string): Promise<FeedbackRecord | null>;
  /** Every feedback on the turn, oldest first (the last is `getFeedback`'s); empty for an unknown turn. */
  listFeedback(turnId: string): Promise<FeedbackRecord[]>;
  listSamples(options?: ListSamplesOptions): Promise<SampleRecord[]>;
  /** Steps, newest first; default 100. */
  listTrainingSteps(options?: { limit?: number; offset?: number }): Promise<TrainingStepRecord[]>;
  /** Kept as counters, so reading them costs the same however many rows the store holds. */
  counts(): Promise<StoreCounts>;
}
