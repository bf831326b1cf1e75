/**
 * Sample rows of the Postgres record store and their conversion to records, which joins in the
 * turn's exact tokens and rollout log-probs: everything a training step reads.
 */
import type { SampleMethod, SampleRecord, SampleStatus, SupportToken } from '../../spec/records.js';
import { decodeFloat64Blob } from '../../core/token-blob-codec.js';
import type { Queryable } from './postgres-database.js';
import { loadTurnTokens } from './postgres-turn-rows.js';

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
  loss_mask: Buffer;
  advantages: Buffer;
  teacher_logprobs: Buffer | null;
  support: string | null;
  rollout_logprobs: Buffer;
  created_at: number;
  updated_at: number;
}

/** The select list, for `sample` joined with its `turn`. */
export const sampleSelectList = `sample.ordinal, sample.id, sample.turn_ordinal, turn.id AS turn_id, turn.session_id,
  sample.method, sample.status, sample.drop_reason, sample.policy_version, sample.judgement_id, sample.feedback_id,
  sample.score, sample.hint, sample.loss_mask, sample.advantages, sample.teacher_logprobs, sample.support,
  turn.logprobs AS rollout_logprobs, sample.created_at, sample.updated_at`;

/** The select list and FROM clause; callers append WHERE and ORDER BY. */
export const sampleColumns = `${sampleSelectList}
  FROM samples AS sample JOIN turns AS turn ON turn.ordinal = sample.turn_ordinal`;

export async function toSampleRecord(client: Queryable, row: SampleRow): Promise<SampleRecord> {
  const tokens = await loadTurnTokens(client, row.turn_ordinal);
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
    promptTokenIds: tokens.promptTokenIds,
    responseTokenIds: tokens.responseTokenIds,
    rolloutLogprobs: decodeFloat64Blob(row.rollout_logprobs),
    lossMask: decodeFloat64Blob(row.loss_mask),
    advantages: decodeFloat64Blob(row.advantages),
    teacherLogprobs: row.teacher_logprobs === null ? null : decodeFloat64Blob(row.teacher_logprobs),
    support: row.support === null ? null : (JSON.parse(row.support) as SupportToken[][]),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
