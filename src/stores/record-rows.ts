/**
 * Row shapes and row-to-record conversions that every SQL record store shares: both stores use
 * the same column names and the same binary forms (`src/core/token-blob-codec.ts`), so one
 * conversion serves both and their records cannot drift apart.
 */
import { decodeFloat64Blob } from '../core/token-blob-codec.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type {
  FeedbackRecord,
  JudgingCounts,
  NewFeedback,
  RolloutProvenance,
  PolicyArtifactKind,
  PolicyVersionRecord,
  TrainingStepMetrics,
  TrainingStepRecord,
  HintSelection,
  JudgeScore,
  JudgeVote,
  JudgedAdvantages,
  JudgementRecord,
  NewSample,
  SampleRecord,
  SampleStatus,
  SupportToken,
} from '../spec/records.js';
import { sampleMethodSchema } from '../spec/records.js';
import type { PolicyCanaryEvidence, PolicyGateEvidence, PolicyVersionState } from '../spec/policy-version-state.js';

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
  user_id: string | null;
  created_at: number;
  /** JSON of a `RolloutProvenance`, or null. */
  rollout: string | null;
}

/** A sample joined with its turn's id and session. */
export interface SampleRow {
  ordinal: number;
  id: string;
  turn_ordinal: number;
  turn_id: string;
  session_id: string;
  /** The turn's user, copied when the sample was built (migration: SQLite 14, Postgres 13). */
  user_id: string | null;
  /** Plain text in the database (no CHECK), checked when read: `sampleMethodOf`. */
  method: string;
  status: SampleStatus;
  drop_reason: string | null;
  policy_version: number;
  judgement_id: number | null;
  feedback_id: number | null;
  score: number | null;
  /** The rollout group and the turn's index in its episode; both null outside a group. */
  rollout_group: string | null;
  rollout_turn_index: number | null;
  hint: string | null;
  loss_mask: Uint8Array;
  /** The judge's combined advantages of a sample judged before the upgrade; null since (`JudgedAdvantages`). */
  judged_advantages: Uint8Array | null;
  distillation_gaps: Uint8Array | null;
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
    user: row.user_id,
    createdAt: row.created_at,
    rollout: row.rollout === null ? null : rolloutProvenanceOf(JSON.parse(row.rollout) as StoredRolloutProvenance),
  };
}

/**
 * The provenance as feedback stored it. Rows written before rewards and advantages were parted
 * also hold the `advantage` the driver formed and no turn index; their turns were single-turn
 * rollouts or already trained, so they read as turn 0, without the advantage.
 */
type StoredRolloutProvenance = Omit<RolloutProvenance, 'turnIndex'> & { turnIndex?: number; advantage?: unknown };

function rolloutProvenanceOf(stored: StoredRolloutProvenance): RolloutProvenance {
  const { advantage: _advantage, turnIndex, ...rest } = stored;
  return { ...rest, turnIndex: turnIndex ?? 0 };
}

/** The provenance column's text, or null. */
export function rolloutColumnOf(feedback: NewFeedback): string | null {
  return feedback.rollout == null ? null : JSON.stringify(feedback.rollout);
}

/**
 * What a store checks of a sample before writing it, as the databases' CHECK constraints and
 * lengths would: a method this clawrl knows, and one entry per response token in every array.
 */
export function checkNewSample(sample: NewSample, responseLength: number): void {
  if (!sampleMethodSchema.safeParse(sample.method).success) {
    throw new ClawrlError('store_error', `sample ${sample.id}: unknown method ${JSON.stringify(sample.method)} (one of ${sampleMethodSchema.options.join(', ')})`);
  }
  if (sample.status !== 'ready') return;
  const lengths: [string, number | undefined][] = [
    ['lossMask', sample.lossMask.length],
    ['distillationGaps', sample.distillationGaps?.length],
    ['teacherLogprobs', sample.teacherLogprobs?.length],
    ['support', sample.support?.length],
  ];
  for (const [field, length] of lengths) {
    if (length !== undefined && length !== responseLength) {
      throw new ClawrlError('store_error', `sample ${sample.id}: ${field} has ${length} entries, the response has ${responseLength} tokens`);
    }
  }
}

function sampleMethodOf(row: SampleRow): SampleRecord['method'] {
  const parsed = sampleMethodSchema.safeParse(row.method);
  if (!parsed.success) {
    throw new ClawrlError('store_error', `sample ${row.id} has the method ${JSON.stringify(row.method)}, which this clawrl does not know: upgrade clawrl`);
  }
  return parsed.data;
}

/** A support token as the judge stored it before the upgrade, with the advantage it combined. */
interface JudgedSupportToken {
  id: number;
  weightedAdvantage: number | null;
}

/**
 * A sample judged before samples stored their reward and gaps apart: its advantages as the judge
 * combined them, the support tokens' included. Its gaps are what can be derived exactly (teacher −
 * rollout where the teacher's log-probs were stored); its support set is only in the advantages.
 */
function judgedFieldsOf(row: SampleRow, judged: Uint8Array, rolloutLogprobs: number[], teacherLogprobs: number[] | null): Pick<SampleRecord, 'judgedAdvantages' | 'distillationGaps' | 'support'> {
  const stored = row.support === null ? null : (JSON.parse(row.support) as JudgedSupportToken[][]);
  const judgedAdvantages: JudgedAdvantages = {
    advantages: decodeFloat64Blob(judged),
    support:
      stored === null
        ? null
        : stored.map((position) => {
            const kept = position.filter((token): token is { id: number; weightedAdvantage: number } => token.weightedAdvantage !== null && token.weightedAdvantage !== undefined);
            return { tokenIds: kept.map((token) => token.id), advantages: kept.map((token) => token.weightedAdvantage) };
          }),
  };
  const distillationGaps = teacherLogprobs === null ? null : teacherLogprobs.map((value, index) => value - (rolloutLogprobs[index] ?? 0));
  return { judgedAdvantages, distillationGaps, support: null };
}

/** A sample record from its row plus its turn's exact tokens and rollout log-probs. */
export function toSampleRecord(
  row: SampleRow,
  turn: { promptTokenIds: number[]; responseTokenIds: number[]; rolloutLogprobs: Uint8Array },
): SampleRecord {
  const rolloutLogprobs = decodeFloat64Blob(turn.rolloutLogprobs);
  const teacherLogprobs = row.teacher_logprobs === null ? null : decodeFloat64Blob(row.teacher_logprobs);
  const measured =
    row.judged_advantages === null
      ? {
          judgedAdvantages: null,
          distillationGaps: row.distillation_gaps === null ? null : decodeFloat64Blob(row.distillation_gaps),
          support: row.support === null ? null : (JSON.parse(row.support) as SupportToken[][]),
        }
      : judgedFieldsOf(row, row.judged_advantages, rolloutLogprobs, teacherLogprobs);
  return {
    id: row.id,
    turnId: row.turn_id,
    sessionId: row.session_id,
    user: row.user_id,
    method: sampleMethodOf(row),
    status: row.status,
    dropReason: row.drop_reason,
    policyVersion: row.policy_version,
    judgementId: row.judgement_id,
    feedbackId: row.feedback_id,
    score: row.score,
    group: row.rollout_group === null ? null : { id: row.rollout_group, turnIndex: row.rollout_turn_index ?? 0 },
    hint: row.hint,
    promptTokenIds: turn.promptTokenIds,
    responseTokenIds: turn.responseTokenIds,
    rolloutLogprobs,
    lossMask: decodeFloat64Blob(row.loss_mask),
    ...measured,
    teacherLogprobs,
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
  /** The lineage's owner; null for the global lineage. */
  user_id: string | null;
  /** SQLite answers comparisons with 0/1, Postgres with a boolean. */
  active: boolean | number;
  state: PolicyVersionState;
  state_reason: string | null;
  state_changed_at: number | null;
  /** JSON text. */
  gate: string | null;
  canary: string | null;
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
    user: row.user_id,
    active: row.active === true || row.active === 1,
    bytes: row.bytes,
    state: row.state,
    stateReason: row.state_reason,
    stateChangedAt: row.state_changed_at,
    gate: row.gate === null ? null : (JSON.parse(row.gate) as PolicyGateEvidence),
    canary: row.canary === null ? null : (JSON.parse(row.canary) as PolicyCanaryEvidence),
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
  rollout_samples_ready: number;
  rollout_samples_trained: number;
  rollout_samples_dropped: number;
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
    rolloutSamples: { ready: row.rollout_samples_ready, trained: row.rollout_samples_trained, dropped: row.rollout_samples_dropped },
  };
}
