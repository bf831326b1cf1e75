/** Row conversions the SQLite and Postgres dashboard queries share. */
import type { ActivityBucket, SampleBucket, SessionSummary, TurnJudgingSummary } from '../spec/dashboard-queries.js';
import type { HintSelection, SampleStatus, SessionStatus } from '../spec/records.js';
import { toFeedbackRecord, toJudgementRecord } from './record-rows.js';

/** A LIKE pattern matching values that start with `prefix` (with `\` as the escape character). */
export function likePrefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/** Folds (bucket, source, status, drop reason, count) rows into one bucket per (bucket, source). */
export function sampleBucketOf(
  rows: readonly { at: number | string; source: string; status: string; drop_reason: string | null; samples: number | string }[],
): SampleBucket[] {
  const buckets = new Map<string, SampleBucket>();
  for (const row of rows) {
    const at = Number(row.at);
    const key = `${at}\u0000${row.source}`;
    const bucket = buckets.get(key) ?? { at, source: row.source, ready: 0, trained: 0, stale: 0, dropped: 0 };
    const samples = Number(row.samples);
    if (row.status === 'ready') bucket.ready += samples;
    else if (row.status === 'trained') bucket.trained += samples;
    else if (row.drop_reason === 'stale') bucket.stale += samples;
    else bucket.dropped += samples;
    buckets.set(key, bucket);
  }
  return [...buckets.values()].sort((a, b) => a.at - b.at || a.source.localeCompare(b.source));
}

/** A sessions row as both stores select it for the sessions list. */
export interface SessionSummaryRow {
  id: string;
  tenant: string | null;
  user_id: string | null;
  status: SessionStatus;
  created_at: number;
  updated_at: number;
  main_turns: number;
  side_turns: number;
}

export const sessionSummaryColumns = 'id, tenant, user_id, status, created_at, updated_at, main_turns, side_turns';

export function sessionSummaryOf(row: SessionSummaryRow): SessionSummary {
  return {
    id: row.id,
    tenant: row.tenant,
    user: row.user_id,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    mainTurns: row.main_turns,
    sideTurns: row.side_turns,
  };
}

/** One bucket per start time that has turns or judgements, from the two grouped queries' rows. */
export function activityBucketsOf(
  turns: readonly { at: number; main: number; side: number }[],
  judgements: readonly { at: number; judgements: number; mean_score: number | null; agreeing: number; readable: number }[],
): ActivityBucket[] {
  const judged = new Map(judgements.map((row) => [row.at, row]));
  const turnsAt = new Map(turns.map((row) => [row.at, row]));
  const starts = [...new Set([...turnsAt.keys(), ...judged.keys()])].sort((a, b) => a - b);
  return starts.map((at) => {
    const turn = turnsAt.get(at);
    const judgement = judged.get(at);
    return {
      at,
      mainTurns: turn?.main ?? 0,
      sideTurns: turn?.side ?? 0,
      judgements: judgement?.judgements ?? 0,
      meanScore: judgement?.mean_score ?? null,
      agreeingVotes: judgement?.agreeing ?? 0,
      readableVotes: judgement?.readable ?? 0,
    };
  });
}

/**
 * The latest judgement, feedback and sample of each turn that `turnFilter` (a condition on `turn`)
 * picks, one row a turn. The page's turns and their latest ids come first, each maximum a seek into
 * the turn's range of judgements_by_identity, feedback_by_turn or samples_by_turn; the rows are then
 * joined by primary key (a correlated maximum inside a join's condition would be evaluated per row).
 */
export function turnJudgingSelect(turnFilter: string): string {
  return `
  SELECT page.turn_id,
    judgement.id AS judgement_id, judgement.judge, judgement.judge_model, judgement.prompt_version, judgement.score AS judgement_score,
    judgement.votes, judgement.hint AS judgement_hint, judgement.hint_candidates, judgement.hint_selection, judgement.latency_ms,
    judgement.created_at AS judgement_created_at,
    feedback.id AS feedback_id, feedback.score AS feedback_score, feedback.text AS feedback_text, feedback.hint AS feedback_hint,
    feedback.tenant AS feedback_tenant, feedback.user_id AS feedback_user, feedback.created_at AS feedback_created_at, feedback.rollout AS feedback_rollout,
    sample.id AS sample_id, sample.status AS sample_status, sample.method AS sample_method, sample.score AS sample_score,
    sample.drop_reason AS sample_drop_reason, sample.policy_version AS sample_policy_version,
    sample.judgement_id AS sample_judgement_id, sample.feedback_id AS sample_feedback_id
  FROM (
    SELECT turn.id AS turn_id,
      (SELECT max(id) FROM judgements WHERE turn_ordinal = turn.ordinal) AS latest_judgement,
      (SELECT max(id) FROM feedback WHERE turn_ordinal = turn.ordinal) AS latest_feedback,
      (SELECT max(ordinal) FROM samples WHERE turn_ordinal = turn.ordinal) AS latest_sample
    FROM turns AS turn WHERE ${turnFilter}
  ) AS page
  LEFT JOIN judgements AS judgement ON judgement.id = page.latest_judgement
  LEFT JOIN feedback ON feedback.id = page.latest_feedback
  LEFT JOIN samples AS sample ON sample.ordinal = page.latest_sample`;
}

export interface TurnJudgingRow {
  turn_id: string;
  judgement_id: number | null;
  judge: string | null;
  judge_model: string | null;
  prompt_version: string | null;
  judgement_score: number | null;
  votes: string | null;
  judgement_hint: string | null;
  hint_candidates: string | null;
  hint_selection: HintSelection | null;
  latency_ms: number | null;
  judgement_created_at: number | null;
  feedback_id: number | null;
  feedback_score: number | null;
  feedback_text: string | null;
  feedback_hint: string | null;
  feedback_tenant: string | null;
  feedback_user: string | null;
  feedback_created_at: number | null;
  feedback_rollout: string | null;
  sample_id: string | null;
  sample_status: SampleStatus | null;
  sample_method: string | null;
  sample_score: number | null;
  sample_drop_reason: string | null;
  sample_policy_version: number | null;
  sample_judgement_id: number | null;
  sample_feedback_id: number | null;
}

function turnJudgingOf(row: TurnJudgingRow): TurnJudgingSummary {
  return {
    turnId: row.turn_id,
    judgement:
      row.judgement_id === null
        ? null
        : toJudgementRecord({
            id: row.judgement_id,
            turn_id: row.turn_id,
            judge: row.judge ?? '',
            judge_model: row.judge_model ?? '',
            prompt_version: row.prompt_version ?? '',
            score: row.judgement_score,
            votes: row.votes ?? '[]',
            hint: row.judgement_hint,
            hint_candidates: row.hint_candidates ?? '[]',
            hint_selection: row.hint_selection,
            latency_ms: row.latency_ms ?? 0,
            created_at: row.judgement_created_at ?? 0,
          }),
    feedback:
      row.feedback_id === null
        ? null
        : toFeedbackRecord({
            id: row.feedback_id,
            turn_id: row.turn_id,
            score: row.feedback_score,
            text: row.feedback_text,
            hint: row.feedback_hint,
            tenant: row.feedback_tenant,
            user_id: row.feedback_user,
            created_at: row.feedback_created_at ?? 0,
            rollout: row.feedback_rollout,
          }),
    sample:
      row.sample_id === null
        ? null
        : {
            id: row.sample_id,
            status: row.sample_status ?? 'dropped',
            method: row.sample_method ?? '',
            score: row.sample_score,
            dropReason: row.sample_drop_reason,
            policyVersion: row.sample_policy_version ?? 0,
            judgementId: row.sample_judgement_id,
            feedbackId: row.sample_feedback_id,
          },
  };
}

/** The rows' summaries in the order of `turnIds`, each known turn once. */
export function turnJudgingsOf(rows: readonly TurnJudgingRow[], turnIds: readonly string[]): TurnJudgingSummary[] {
  const byId = new Map(rows.map((row) => [row.turn_id, row]));
  const seen = new Set<string>();
  const summaries: TurnJudgingSummary[] = [];
  for (const id of turnIds) {
    const row = byId.get(id);
    if (row === undefined || seen.has(id)) continue;
    seen.add(id);
    summaries.push(turnJudgingOf(row));
  }
  return summaries;
}
