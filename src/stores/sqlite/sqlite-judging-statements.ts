/**
 * Statements of the judging half of the SQLite record store: the judge queue, judgements,
 * feedback and samples (migration 2). Rows refer to turns by their internal `ordinal`.
 */
import type Database from 'better-sqlite3';
import type { SampleStatus } from '../../spec/records.js';
import type { FeedbackRow, JudgementRow, JudgingCountsRow, SampleRow } from '../record-rows.js';

export interface TurnKeyRow {
  ordinal: number;
  id: string;
  session_id: string;
  type: 'main' | 'side';
  trainable: number;
  response_length: number;
}

export interface QueueRow {
  turn_ordinal: number;
  generation: number;
  attempts: number;
  queued_at: number;
}

/** New samples never carry judged advantages: only rows from before the upgrade do. */
/** The user is not inserted: the statement copies it from the turn. */
export type SampleInsert = Omit<SampleRow, 'ordinal' | 'turn_id' | 'session_id' | 'judged_advantages' | 'user_id'>;

const judgementColumns = `judgement.id, turn.id AS turn_id, judge, judge_model, prompt_version, score, votes, hint,
  hint_candidates, hint_selection, latency_ms, judgement.created_at`;

const sampleColumns = `sample.ordinal, sample.id, sample.turn_ordinal, turn.id AS turn_id, turn.session_id, sample.user_id, method,
  sample.status, drop_reason, sample.policy_version, judgement_id, feedback_id, score, rollout_group, rollout_turn_index, hint, loss_mask,
  judged_advantages, distillation_gaps, teacher_logprobs, support, created_at, updated_at`;

export function sqliteJudgingStatements(database: Database.Database) {
  return {
    selectTurnKey: database.prepare<[string], TurnKeyRow>(
      'SELECT ordinal, id, session_id, type, trainable, length(response_token_ids) / 4 AS response_length FROM turns WHERE id = ?',
    ),
    selectTurnIdByOrdinal: database.prepare<[number], { id: string }>('SELECT id FROM turns WHERE ordinal = ?'),
    selectRolloutLogprobs: database.prepare<[number], { logprobs: Buffer }>('SELECT logprobs FROM turns WHERE ordinal = ?'),
    enqueue: database.prepare<[number, number]>(`
      INSERT INTO judge_queue (turn_ordinal, queued_at) VALUES (?, ?)
      ON CONFLICT (turn_ordinal) DO UPDATE SET
        generation = generation + 1, queued_at = excluded.queued_at, attempts = 0, retry_at = 0, last_error = NULL
    `),
    selectDue: database.prepare<{ now: number; limit: number }, QueueRow>(`
      SELECT turn_ordinal, generation, attempts, queued_at FROM judge_queue
      WHERE retry_at <= @now AND (lease_expires_at IS NULL OR lease_expires_at <= @now)
      ORDER BY queued_at, turn_ordinal LIMIT @limit
    `),
    lease: database.prepare<[string, number, number]>(
      'UPDATE judge_queue SET lease_owner = ?, lease_expires_at = ? WHERE turn_ordinal = ?',
    ),
    releaseDone: database.prepare<[number, string, number]>(
      'DELETE FROM judge_queue WHERE turn_ordinal = ? AND lease_owner = ? AND generation = ?',
    ),
    releaseFailed: database.prepare<{ ordinal: number; owner: string; generation: number; retryAt: number; error: string }>(`
      UPDATE judge_queue SET attempts = attempts + 1, retry_at = @retryAt, last_error = @error,
        lease_owner = NULL, lease_expires_at = NULL
      WHERE turn_ordinal = @ordinal AND lease_owner = @owner AND generation = @generation
    `),
    // A release for an outdated generation: the turn was queued again meanwhile and stays due.
    endLease: database.prepare<[number, string]>(
      'UPDATE judge_queue SET lease_owner = NULL, lease_expires_at = NULL WHERE turn_ordinal = ? AND lease_owner = ?',
    ),
    deleteJudgementIdentity: database.prepare<[number, string, string, string]>(
      'DELETE FROM judgements WHERE turn_ordinal = ? AND judge = ? AND judge_model = ? AND prompt_version = ?',
    ),
    insertJudgement: database.prepare<
      Omit<JudgementRow, 'id' | 'turn_id'> & { turn_ordinal: number; wanted_hint: number; readable_votes: number; agreeing_votes: number }
    >(`
      INSERT INTO judgements (turn_ordinal, judge, judge_model, prompt_version, score, votes, hint, hint_candidates,
        hint_selection, wanted_hint, readable_votes, agreeing_votes, latency_ms, created_at)
      VALUES (@turn_ordinal, @judge, @judge_model, @prompt_version, @score, @votes, @hint, @hint_candidates,
        @hint_selection, @wanted_hint, @readable_votes, @agreeing_votes, @latency_ms, @created_at)
    `),
    listJudgements: database.prepare<[number], JudgementRow>(
      `SELECT ${judgementColumns} FROM judgements AS judgement JOIN turns AS turn ON turn.ordinal = judgement.turn_ordinal
       WHERE judgement.turn_ordinal = ? ORDER BY judgement.id`,
    ),
    insertFeedback: database.prepare<[number, number | null, string | null, string | null, string | null, string | null, number, string | null]>(
      'INSERT INTO feedback (turn_ordinal, score, text, hint, tenant, user_id, created_at, rollout) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    latestFeedback: database.prepare<[number], FeedbackRow>(`
      SELECT feedback.id, turn.id AS turn_id, feedback.score, feedback.text, feedback.hint, feedback.tenant, feedback.user_id, feedback.created_at,
        feedback.rollout
      FROM feedback JOIN turns AS turn ON turn.ordinal = feedback.turn_ordinal
      WHERE feedback.turn_ordinal = ? ORDER BY feedback.id DESC LIMIT 1
    `),
    listFeedback: database.prepare<[number], FeedbackRow>(`
      SELECT feedback.id, turn.id AS turn_id, feedback.score, feedback.text, feedback.hint, feedback.tenant, feedback.user_id, feedback.created_at,
        feedback.rollout
      FROM feedback JOIN turns AS turn ON turn.ordinal = feedback.turn_ordinal
      WHERE feedback.turn_ordinal = ? ORDER BY feedback.id
    `),
    supersedeReady: database.prepare<[number, number]>(
      "UPDATE samples SET status = 'dropped', drop_reason = 'superseded', updated_at = ? WHERE turn_ordinal = ? AND status = 'ready'",
    ),
    insertSample: database.prepare<SampleInsert>(`
      INSERT INTO samples (id, turn_ordinal, method, status, drop_reason, policy_version, judgement_id, feedback_id,
        score, rollout_group, rollout_turn_index, hint, loss_mask, judged_advantages, distillation_gaps, teacher_logprobs, support, created_at, updated_at, user_id)
      VALUES (@id, @turn_ordinal, @method, @status, @drop_reason, @policy_version, @judgement_id, @feedback_id,
        @score, @rollout_group, @rollout_turn_index, @hint, @loss_mask, NULL, @distillation_gaps, @teacher_logprobs, @support, @created_at, @updated_at,
        (SELECT user_id FROM turns WHERE ordinal = @turn_ordinal))
    `),
    selectSample: database.prepare<[string], SampleRow>(
      `SELECT ${sampleColumns} FROM samples AS sample JOIN turns AS turn ON turn.ordinal = sample.turn_ordinal WHERE sample.id = ?`,
    ),
    listSamples: database.prepare<
      { status: SampleStatus | null; turn: number | null; limit: number; offset: number },
      SampleRow
    >(`
      SELECT ${sampleColumns} FROM samples AS sample JOIN turns AS turn ON turn.ordinal = sample.turn_ordinal
      WHERE (@status IS NULL OR sample.status = @status) AND (@turn IS NULL OR sample.turn_ordinal = @turn)
      ORDER BY sample.ordinal LIMIT @limit OFFSET @offset
    `),
    // A turn's samples apart from the listing above: with `(@turn IS NULL OR ...)` SQLite walks every
    // sample in ordinal order and filters, where this one seeks samples_by_turn (the dashboard's turn
    // views and the trainer's commit read a turn's samples; measured by `clawrl bench dashboard`).
    listSamplesOfTurn: database.prepare<{ status: SampleStatus | null; turn: number; limit: number; offset: number }, SampleRow>(`
      SELECT ${sampleColumns} FROM samples AS sample JOIN turns AS turn ON turn.ordinal = sample.turn_ordinal
      WHERE sample.turn_ordinal = @turn AND (@status IS NULL OR sample.status = @status)
      ORDER BY sample.turn_ordinal, sample.ordinal LIMIT @limit OFFSET @offset
    `),
    updateSampleStatus: database.prepare<[SampleStatus, string | null, number, string]>(
      "UPDATE samples SET status = ?, drop_reason = ?, updated_at = ? WHERE id = ? AND status = 'ready'",
    ),
    listTurnIds: database.prepare<{ since: number; linkedOnly: number; limit: number; offset: number }, { id: string }>(`
      SELECT id FROM turns
      WHERE started_at >= @since
        AND (@linkedOnly = 0 OR EXISTS (SELECT 1 FROM turn_next_states WHERE turn_ordinal = turns.ordinal))
      ORDER BY ordinal LIMIT @limit OFFSET @offset
    `),
    // The full recount the counters of record_counts replace: the contract suites check them against it.
    recount: database.prepare<[], JudgingCountsRow>(`
      SELECT
        (SELECT count(*) FROM (SELECT turn_ordinal FROM judgements UNION SELECT turn_ordinal FROM feedback)) AS judged,
        (SELECT count(*) FROM judge_queue) AS pending,
        (SELECT count(*) FROM judge_queue WHERE attempts > 0) AS retrying,
        (SELECT count(*) FROM turns AS turn JOIN sessions AS session ON session.id = turn.session_id
          WHERE turn.type = 'main' AND turn.trainable = 1 AND session.status = 'closed'
            AND NOT EXISTS (SELECT 1 FROM turn_next_states WHERE turn_next_states.turn_ordinal = turn.ordinal)
            AND NOT EXISTS (SELECT 1 FROM feedback WHERE feedback.turn_ordinal = turn.ordinal)) AS without_next_state,
        (SELECT count(*) FROM judgements WHERE wanted_hint = 1 AND hint IS NOT NULL) AS hints_accepted,
        (SELECT count(*) FROM judgements WHERE wanted_hint = 1 AND hint IS NULL) AS hints_rejected,
        (SELECT avg(latency_ms) FROM judgements) AS average_latency_ms,
        (SELECT coalesce(sum(readable_votes), 0) FROM judgements) AS readable_votes,
        (SELECT coalesce(sum(agreeing_votes), 0) FROM judgements) AS agreeing_votes,
        (SELECT count(*) FROM samples WHERE status = 'ready') AS samples_ready,
        (SELECT count(*) FROM samples WHERE status = 'trained') AS samples_trained,
        (SELECT count(*) FROM samples WHERE status = 'dropped') AS samples_dropped,
        (SELECT count(*) FROM samples JOIN feedback ON feedback.id = samples.feedback_id
          WHERE samples.status = 'ready' AND feedback.rollout IS NOT NULL) AS rollout_samples_ready,
        (SELECT count(*) FROM samples JOIN feedback ON feedback.id = samples.feedback_id
          WHERE samples.status = 'trained' AND feedback.rollout IS NOT NULL) AS rollout_samples_trained,
        (SELECT count(*) FROM samples JOIN feedback ON feedback.id = samples.feedback_id
          WHERE samples.status = 'dropped' AND feedback.rollout IS NOT NULL) AS rollout_samples_dropped
    `),
  };
}

export type SqliteJudgingStatements = ReturnType<typeof sqliteJudgingStatements>;
