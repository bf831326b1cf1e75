/**
 * Wire shapes of the dashboard's admin routes (`/admin/dashboard/*`), shared with the browser code
 * in `src/dashboard/ui`, which imports these types and nothing else of the gateway.
 */
import type { ActivitySeries, PolicyTurnScore, SessionCursor, SessionSummary } from '../../spec/dashboard-queries.js';
import type { ExperimentChart } from '../../spec/experiment-charts.js';
import type { PolicyCanaryEvidence, PolicyGateEvidence, PolicyVersionState } from '../../spec/policy-version-state.js';
import type { MemoryEntryKind, MemoryEntryRecord, UserSummary } from '../../spec/user-memory.js';
import type { UserMemoryMode } from '../../core/user-memory-context.js';

export type { ActivitySeries, ExperimentChart, MemoryEntryKind, MemoryEntryRecord, SessionCursor, SessionSummary, UserSummary };

/** A training step as the overview charts it. */
export interface TrainingPoint {
  step: number;
  policyVersion: number;
  endedAt: number;
  loss: number;
  kl: number | null;
  anchorKl: number | null;
  clipFraction: number;
  learningRate: number;
  samplesUsed: number;
  samplesDropped: number;
}

export interface OverviewResponse {
  /** Null: the admin key's overview, every tenant's traffic. */
  tenant: null;
  now: number;
  since: number;
  bucketMs: number;
  /** `GET /admin/status`'s body. */
  status: StatusView;
  series: ActivitySeries;
  /** Oldest first, at most the latest 500. */
  training: TrainingPoint[];
}

/**
 * The overview a tenant's key reads: its own counts (`/admin/status` with that key) and nothing
 * that aggregates other tenants' traffic, so no charts, judging, samples or training.
 */
export interface TenantOverviewResponse {
  tenant: string;
  now: number;
  status: TenantStatusView;
}

/** `/admin/status` with a tenant's key. */
export interface TenantStatusView {
  tenant: string;
  sessions: number;
  sessionsOpen: number;
  turns: { main: number; side: number };
  feedback: number;
  policyVersion: number;
  model: string;
  engine: string;
}

/** The parts of `/admin/status` the dashboard reads. */
export interface StatusView {
  sessions: number;
  turns: { main: number; side: number; aborted: number; failed: number };
  judged: number;
  samples: { ready: number; trained: number; dropped: number };
  judging: { pending: number; retrying: number; voteAgreement: number | null };
  trainSteps: number;
  policyVersion: number;
  training: { enabled: boolean; paused?: boolean; training?: boolean; samplesDroppedStale?: number; trainEvery?: number };
  model: string;
  engine: string;
}

export interface SessionPageResponse {
  data: SessionSummary[];
  /** Pass as `after` for the next page; null on the last. */
  next: string | null;
}

/** One raw answer of the judge, as `/admin/turns/{id}` holds it. */
export interface VoteView {
  /** `verdict`: a ±1/0 vote; `hint`: a hint-extraction answer. */
  kind: string;
  /** The judge's text, whole. */
  text: string;
  /** The box read from the text; null when unreadable. */
  score: number | null;
  /** Hint answers: the hint accepted from it (a candidate); null otherwise. */
  hint: string | null;
  /** Hint answers without an accepted hint: why (`missing-hint`, `hint-too-short`, ...). */
  rejection: string | null;
}

/** The feedback that counts for the turn (the newest). */
export interface FeedbackView {
  /** A person's or agent's reward; null for text or a hint only, or a rollout's (its reward is `rollout.reward`). */
  score: number | null;
  text: string | null;
  hint: string | null;
  rollout: { runId: string; environment: string; step: number; outcomeReward: number; processReward: number | null; reward: number } | null;
}

export interface JudgementView {
  /** What the turn trains on: a rollout's reward, else the feedback's score, else the judge's. */
  score: number | null;
  /** Where `score` came from; null when there is none. */
  scoreSource: 'rollout' | 'feedback' | 'judge' | null;
  /** The judge's own majority verdict; null when no vote was readable or the turn was not judged. */
  judgeScore: number | null;
  /** Every vote of the latest judgement, verdicts first as the judge cast them. */
  votes: VoteView[];
  /** The hint the turn trains with: the feedback's, else the one the judge kept. */
  hint: string | null;
  /** Every hint the judge accepted, in vote order; the kept one is the judge's `hint`. */
  hintCandidates: string[];
  /** The judge's kept hint (null when it accepted none). */
  judgeHint: string | null;
  /** How the judge chose among candidates: `overlap` (teacher–student overlap) or `longest`. */
  hintSelection: string | null;
  /** `feedback` when there is feedback, else the judge's backend. */
  judge: string;
  feedback: FeedbackView | null;
}

export interface SampleView {
  id: string;
  status: string;
  method: string;
  score: number | null;
  dropReason: string | null;
  policyVersion: number;
}

export interface SessionTurnView {
  id: string;
  index: number;
  policyVersion: number;
  startedAt: number;
  /** What the user (or tools) said before the turn: the messages after the previous assistant one, system messages aside. */
  input: string;
  /**
   * The system messages among them (an agent's system prompt, often tens of thousands of
   * characters, on its first turn), shown folded after the input; null when there are none.
   */
  system: string | null;
  response: string;
  judgement: JudgementView | null;
  /** The turn's latest sample. */
  sample: SampleView | null;
}

export interface SessionTurnsResponse {
  session: SessionSummary & { closedAt: number | null; closeReason: string | null };
  turns: SessionTurnView[];
  /** First index of the next page; null on the last. */
  next: number | null;
}

export interface TokenView {
  id: number;
  /** The token's text; null when the server has no tokenizer for the model. */
  text: string | null;
}

export interface TurnTokensResponse {
  id: string;
  sessionId: string;
  index: number;
  policyVersion: number;
  prompt: TokenView[];
  response: (TokenView & { logprob: number | null; teacherGap: number | null })[];
  judgement: JudgementView | null;
  sample: SampleView | null;
}

export interface PolicyView {
  version: number;
  parent: number | null;
  createdAt: number;
  active: boolean;
  kind: string;
  step: number | null;
  samples: number;
  metrics: { loss: number; clipFraction: number; kl: number | null; learningRate: number } | null;
  score: PolicyTurnScore | null;
  /** The lifecycle state (`candidate` … `retired`), why and since when, and the gate's and canary's evidence. */
  state: PolicyVersionState;
  stateReason: string | null;
  stateChangedAt: number | null;
  gate: PolicyGateEvidence | null;
  canary: PolicyCanaryEvidence | null;
}

export interface PoliciesResponse {
  /** Newest first. */
  data: PolicyView[];
  /** Pass as `before` for the next (older) page; null on the last. */
  next: number | null;
}

export interface ExperimentsResponse {
  /** Null when the server was started without `--results-dir`. */
  resultsDir: string | null;
  data: ExperimentChart[];
}

/** `GET /admin/users`: the users of sessions and of memory, by name (a tenant's key: its own users). */
export interface UsersResponse {
  object: 'list';
  data: UserSummary[];
}

/** `GET /admin/users/{user}/memory`: the user's entries, oldest first, and what the server does with them. */
export interface UserMemoryResponse {
  object: 'list';
  user: string;
  /** `--user-memory`: off keeps no new entries and adds none to requests. */
  mode: UserMemoryMode;
  maximumEntries: number;
  data: MemoryEntryRecord[];
}

/** `POST /admin/users/{user}/memory`: the entry, and whether it was added or an entry with the same text was refreshed. */
export interface RememberResponse {
  outcome: 'added' | 'repeated';
  entry: MemoryEntryRecord;
  /** Entries the bound dropped to make room. */
  droppedIds: number[];
}
