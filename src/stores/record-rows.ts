/**
 * Row shapes and row-to-record conversions that every SQL record store shares: both stores use
 * the same column names and the same binary forms (`src/core/token-blob-codec.ts`), so one
 * conversion serves both and their records cannot drift apart.
 */
import { decodeFloat64Blob } from '../core/token-blob-codec.js';
import type {
  FeedbackRecord,
  JudgingCounts,
  PolicyArtifactKind,
  PolicyVersionRecord,
  TrainingStepMetrics,
  TrainingStepRecord,
  HintSelection,
  JudgeScore,
  JudgeVote,
  JudgementRecord,
  SampleMethod,
  SampleRecord,
  SampleStatus,
  SupportToken,
} from '../spec/records.js';

export interface JudgementRow {
  id: number;
  turn_id: string;
  judge: string;
  judge_model: string;
  prompt_version: string;
  score: number | null;
  votes: string;
  hint: string | null;
  hint_candidates: string;
  hint_selection: HintSelection | null;
  latency_ms: number;
  created_at: number;
}

export interface FeedbackRow {
  id: number;
  turn_id: string;
  score: number | null;
  text: string | null;
  hint: string | null;
  tenant: string | null;
  created_at: number;
}

/** A sample joined with its turn's id and session. */
export interface SampleRow {
  ordinal: number;
  id: string;
  turn_ordinal: number;
  turn_id: string;
  session_id: string;
  method: SampleMethod;
  status: SampleStatus;
  drop_reason: string | null;
  policy_version: number;
  judgement_id: number | null;
  feedback_id: number | null;
  score: number | null;
  hint: string | null;
  loss_mask: Uint8Array;
  advantages: Uint8Array;
  teacher_logprobs: Uint8Array | null;
  support: string | null;
  created_at: number;
  updated_at: number;
}

export function toJudgementRecord(row: JudgementRow): JudgementRecord {
  return {
    id: row.id,
    turnId: row.turn_id,
    judge: row.judge,
    judgeModel: row.judge_model,
    promptVersion: row.prompt_version,
    score: row.score as JudgeScore | null,
    votes: JSON.parse(row.votes) as JudgeVote[],
    hint: row.hint,
    hintCandidates: JSON.parse(row.hint_candidates) as string[],
    hintSelection: row.hint_selection,
    latencyMs: row.latency_ms,
    createdAt: row.created_at,
  };
}

export function toFeedbackRecord(row: FeedbackRow): FeedbackRecord {
  return {
    id: row.id,
    turnId: row.turn_id,
    score: row.score,
    text: row.text,
    hint: row.hint,
    tenant: row.tenant,
    createdAt: row.created_at,
  };
}

/** A sample record from its row plus its turn's exact tokens and rollout log-probs. */
export function toSampleRecord(
  row: SampleRow,
  turn: { promptTokenIds: number[]; responseTokenIds: number[]; rolloutLogprobs: Uint8Array },
): SampleRecord {
  return {
    id: row.id,
    turnId: row.turn_id,
    sessionId: row.session_id,
    method: row.method,
    status: row.status,
    dropReason: row.drop_reason,
    policyVersion: row.policy_version,
    judgementId: row.judgement_id,
    feedbackId: row.feedback_id,
    score: row.score,
    hint: row.hint,
    promptTokenIds: turn.promptTokenIds,
    responseTokenIds: turn.responseTokenIds,
    rolloutLogprobs: decodeFloat64Blob(turn.rolloutLogprobs),
    lossMask: decodeFloat64Blob(row.loss_mask),
    advantages: decodeFloat64Blob(row.advantages),
    teacherLogprobs: row.teacher_logprobs === null ? null : decodeFloat64Blob(row.teacher_logprobs),
    support: row.support === null ? null : (JSON.parse(row.support) as SupportToken[][]),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface PolicyVersionRow {
  version: number;
  parent: number | null;
  kind: PolicyArtifactKind;
  step: number | null;
  samples: number;
  metrics: string | null;
  bytes: number;
  created_at: number;
  /** SQLite answers comparisons with 0/1, Postgres with a boolean. */
  active: boolean | number;
}

export interface TrainingStepRow {
  step: number;
  policy_version: number;
  samples_used: number;
  metrics: string;
  checkpoint: string | null;
  started_at: number;
  ended_at: number;
}

export function toPolicyVersionRecord(row: PolicyVersionRow): PolicyVersionRecord {
  return {
    version: row.version,
    parent: row.parent,
    kind: row.kind,
    step: row.step,
    samples: row.samples,
    metrics: row.metrics === null ? null : (JSON.parse(row.metrics) as TrainingStepMetrics),
    createdAt: row.created_at,
    active: row.active === true || row.active === 1,
    bytes: row.bytes,
  };
}

export function toTrainingStepRecord(row: TrainingStepRow): TrainingStepRecord {
  return {
    step: row.step,
    policyVersion: row.policy_version,
    samplesUsed: row.samples_used,
    metrics: JSON.parse(row.metrics) as TrainingStepMetrics,
    checkpoint: row.checkpoint,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}

export interface JudgingCountsRow {
  judged: number;
  pending: number;
  retrying: number;
  without_next_state: number;
  hints_accepted: number;
  hints_rejected: number;
  average_latency_ms: number | null;
  readable_votes: number;
  agreeing_votes: number;
  samples_ready: number;
  samples_trained: number;
  samples_dropped: number;
}

export function toJudgingCounts(row: JudgingCountsRow): JudgingCounts {
  return {
    judged: row.judged,
    pending: row.pending,
    retrying: row.retrying,
    withoutNextState: row.without_next_state,
    hintsAccepted: row.hints_accepted,
    hintsRejected: row.hints_rejected,
    averageLatencyMs: row.average_latency_ms,
    voteAgreement: row.readable_votes === 0 ? null : row.agreeing_votes / row.readable_votes,
    samples: { ready: row.samples_ready, trained: row.samples_trained, dropped: row.samples_dropped },
  };
}
