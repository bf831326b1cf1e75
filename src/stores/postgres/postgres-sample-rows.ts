/**
 * Sample rows of the Postgres record store and their conversion to records, which joins in the
 * turn's exact tokens and rollout log-probs: everything a training step reads.
 */
import type { SampleRecord } from '../../spec/records.js';
import { toSampleRecord as toSharedSampleRecord, type SampleRow } from '../record-rows.js';
import type { Queryable } from './postgres-database.js';
import { loadTurnTokens } from './postgres-turn-rows.js';

/** A sample row with its turn's rollout log-probs joined in. */
export interface PostgresSampleRow extends SampleRow {
  rollout_logprobs: Buffer;
}

/** The select list, for `sample` joined with its `turn`. */
export const sampleSelectList = `sample.ordinal, sample.id, sample.turn_ordinal, turn.id AS turn_id, turn.session_id, sample.user_id,
  sample.method, sample.status, sample.drop_reason, sample.policy_version, sample.judgement_id, sample.feedback_id,
  sample.score, sample.rollout_group, sample.rollout_turn_index, sample.hint, sample.loss_mask, sample.judged_advantages, sample.distillation_gaps, sample.teacher_logprobs, sample.support,
  turn.logprobs AS rollout_logprobs, sample.created_at, sample.updated_at`;

/** The select list and FROM clause; callers append WHERE and ORDER BY. */
export const sampleColumns = `${sampleSelectList}
  FROM samples AS sample JOIN turns AS turn ON turn.ordinal = sample.turn_ordinal`;

export async function toSampleRecord(client: Queryable, row: PostgresSampleRow): Promise<SampleRecord> {
  const tokens = await loadTurnTokens(client, row.turn_ordinal);
  return toSharedSampleRecord(row, { ...tokens, rolloutLogprobs: row.rollout_logprobs });
}
