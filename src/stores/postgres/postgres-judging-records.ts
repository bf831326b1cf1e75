/**
 * The judging half of the Postgres record store: judge queue, judgements, feedback, samples.
 *
 * Claiming locks due queue rows with `FOR UPDATE SKIP LOCKED` and leases them in the same
 * statement, so workers in any number of processes never claim the same turn, and never wait on
 * each other's claims either. Writes that touch several tables are single statements with
 * data-modifying CTEs (atomic without a round trip per table) or one transaction.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ClaimTurnsOptions, ReleaseTurnOptions } from '../../spec/judging-queue.js';
import type { ListSamplesOptions, ListTurnIdsOptions } from '../../spec/record-reads.js';
import type {
  FeedbackRecord,
  JudgeClaim,
  JudgementRecord,
  JudgingCounts,
  NewFeedback,
  NewJudgement,
  NewSample,
  SampleRecord,
  TurnRecord,
} from '../../spec/records.js';
import { encodeFloat64Blob } from '../../core/token-blob-codec.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { checkPaging } from './postgres-paging.js';
import { checkNewSample, rolloutColumnOf, toFeedbackRecord, toJudgementRecord, toJudgingCounts, type FeedbackRow, type JudgementRow, type JudgingCountsRow } from '../record-rows.js';
import { sampleColumns, toSampleRecord, type PostgresSampleRow } from './postgres-sample-rows.js';

const defaultListLimit = 100;

export type TurnLoader = (client: Queryable, id: string) => Promise<TurnRecord | null>;

const selectJudgements = `
  SELECT judgement.id, turn.id AS turn_id, judge, judge_model, prompt_version, score, votes, hint, hint_candidates,
    hint_selection, latency_ms, judgement.created_at
  FROM judgements AS judgement JOIN turns AS turn ON turn.ordinal = judgement.turn_ordinal
  WHERE turn.id = $1 ORDER BY judgement.id
`;

const selectLatestFeedback = `
  SELECT feedback.id, turn.id AS turn_id, feedback.score, feedback.text, feedback.hint, feedback.tenant, feedback.user_id,
    feedback.created_at, feedback.rollout
  FROM feedback JOIN turns AS turn ON turn.ordinal = feedback.turn_ordinal
  WHERE turn.id = $1 ORDER BY feedback.id DESC LIMIT 1
`;
const selectFeedback = `
  SELECT feedback.id, turn.id AS turn_id, feedback.score, feedback.text, feedback.hint, feedback.tenant, feedback.user_id,
    feedback.created_at, feedback.rollout
  FROM feedback JOIN turns AS turn ON turn.ordinal = feedback.turn_ordinal
  WHERE turn.id = $1 ORDER BY feedback.id
`;

const turnOrdinalOf = '(SELECT ordinal FROM turns WHERE id = $1)';

export class PostgresJudgingRecords {
  readonly #database: PostgresDatabase;
  readonly #loadTurn: TurnLoader;

  constructor(database: PostgresDatabase, loadTurn: TurnLoader) {
    this.#database = database;
    this.#loadTurn = loadTurn;
  }

  /**
   * Queues the turns `select` yields as (ordinal, queued_at), or queues them again: a new
   * generation, due at once. A live lease stays, so its holder's late release keeps the turn queued.
   */
  static enqueueStatement(select: string): string {
    return `INSERT INTO judge_queue (turn_ordinal, queued_at) ${select}
      ON CONFLICT (turn_ordinal) DO UPDATE SET generation = judge_queue.generation + 1,
        queued_at = excluded.queued_at, attempts = 0, retry_at = 0, last_error = NULL`;
  }

  async claimTurns(options: ClaimTurnsOptions): Promise<JudgeClaim[]> {
    if (!Number.isInteger(options.limit) || options.limit < 0) {
      throw new ClawrlError('invalid_request', `limit must be a non-negative integer, got ${options.limit}`, { param: 'limit' });
    }
    const claimed = await this.#database.rows<{ turn_id: string; generation: number; attempts: number; queued_at: number; turn_ordinal: number }>(
      `WITH due AS (
         SELECT turn_ordinal FROM judge_queue
         WHERE retry_at <= $1 AND (lease_expires_at IS NULL OR lease_expires_at <= $1)
         ORDER BY queued_at, turn_ordinal LIMIT $2
         FOR UPDATE SKIP LOCKED
       )
       UPDATE judge_queue AS queue SET lease_owner = $3, lease_expires_at = $1::bigint + $4::bigint
       FROM due JOIN turns AS turn ON turn.ordinal = due.turn_ordinal
       WHERE queue.turn_ordinal = due.turn_ordinal
       RETURNING turn.id AS turn_id, queue.generation, queue.attempts, queue.queued_at, queue.turn_ordinal`,
      [options.now, options.limit, options.workerId, options.leaseMs],
    );
    claimed.sort((left, right) => left.queued_at - right.queued_at || left.turn_ordinal - right.turn_ordinal);
    return Promise.all(
      claimed.map(async (row) => {
        const [turn, feedback, judgements] = await Promise.all([
          this.#loadTurn(this.#database, row.turn_id),
          this.getFeedback(row.turn_id),
          this.listJudgements(row.turn_id),
        ]);
        if (turn === null) throw new ClawrlError('store_error', `queued turn ${row.turn_id} vanished`);
        return { turn, generation: row.generation, attempts: row.attempts, feedback, judgements };
      }),
    );
  }

  async releaseTurn(options: ReleaseTurnOptions): Promise<boolean> {
    const { outcome } = options;
    const finished =
      outcome.kind === 'done'
        ? await this.#database.query(
            `DELETE FROM judge_queue WHERE turn_ordinal = ${turnOrdinalOf} AND lease_owner = $2 AND generation = $3`,
            [options.turnId, options.workerId, options.generation],
          )
        : await this.#database.query(
            `UPDATE judge_queue SET attempts = attempts + 1, retry_at = $4, last_error = $5,
               lease_owner = NULL, lease_expires_at = NULL
             WHERE turn_ordinal = ${turnOrdinalOf} AND lease_owner = $2 AND generation = $3`,
            [options.turnId, options.workerId, options.generation, outcome.retryAt, outcome.error],
          );
    if ((finished.rowCount ?? 0) > 0) return true;
    // An outdated generation: the turn was queued again meanwhile, so only the lease ends.
    const ended = await this.#database.query(
      `UPDATE judge_queue SET lease_owner = NULL, lease_expires_at = NULL
       WHERE turn_ordinal = ${turnOrdinalOf} AND lease_owner = $2`,
      [options.turnId, options.workerId],
    );
    return (ended.rowCount ?? 0) > 0;
  }

  async recordJudgement(judgement: NewJudgement): Promise<JudgementRecord> {
    const verdicts = judgement.votes.filter((vote) => vote.kind === 'verdict' && vote.score !== null);
    // Re-recording an identity replaces it under a new, larger id: the latest is always last.
    const [row] = await this.#database.rows<{ id: number }>(
      `INSERT INTO judgements (turn_ordinal, judge, judge_model, prompt_version, score, votes, hint, hint_candidates,
         hint_selection, wanted_hint, readable_votes, agreeing_votes, latency_ms, created_at)
       SELECT ordinal, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14 FROM turns WHERE id = $1
       ON CONFLICT (turn_ordinal, judge, judge_model, prompt_version) DO UPDATE SET id = DEFAULT,
         score = excluded.score, votes = excluded.votes, hint = excluded.hint,
         hint_candidates = excluded.hint_candidates, hint_selection = excluded.hint_selection,
         wanted_hint = excluded.wanted_hint, readable_votes = excluded.readable_votes,
         agreeing_votes = excluded.agreeing_votes, latency_ms = excluded.latency_ms, created_at = excluded.created_at
       RETURNING id`,
      [
        judgement.turnId,
        judgement.judge,
        judgement.judgeModel,
        judgement.promptVersion,
        judgement.score,
        JSON.stringify(judgement.votes),
        judgement.hint,
        JSON.stringify(judgement.hintCandidates),
        judgement.hintSelection,
        judgement.votes.some((vote) => vote.kind === 'hint'),
        verdicts.length,
        verdicts.filter((vote) => vote.score === judgement.score).length,
        judgement.latencyMs,
        judgement.createdAt,
      ],
    );
    if (row === undefined) {
      throw new ClawrlError('store_error', `cannot record a judgement: unknown turn ${judgement.turnId}`);
    }
    return { ...judgement, id: row.id };
  }

  async listJudgements(turnId: string): Promise<JudgementRecord[]> {
    return (await this.#database.rows<JudgementRow>(selectJudgements, [turnId])).map(toJudgementRecord);
  }

  async recordFeedback(feedback: NewFeedback): Promise<FeedbackRecord | null> {
    const [row] = await this.#database.rows<{ id: number }>(
      `WITH turn AS (SELECT ordinal, type, trainable FROM turns WHERE id = $1),
       inserted AS (
         INSERT INTO feedback (turn_ordinal, score, text, hint, tenant, user_id, created_at, rollout)
         SELECT ordinal, $2, $3, $4, $5, $8, $6, $7 FROM turn RETURNING id
       ),
       queued AS (
         ${PostgresJudgingRecords.enqueueStatement("SELECT ordinal, $6::bigint FROM turn WHERE type = 'main' AND trainable")}
       )
       SELECT id FROM inserted`,
      [feedback.turnId, feedback.score, feedback.text, feedback.hint, feedback.tenant, feedback.createdAt, rolloutColumnOf(feedback), feedback.user],
    );
    return row === undefined ? null : { ...feedback, rollout: feedback.rollout ?? null, id: row.id };
  }

  async getFeedback(turnId: string): Promise<FeedbackRecord | null> {
    const [row] = await this.#database.rows<FeedbackRow>(selectLatestFeedback, [turnId]);
    return row === undefined ? null : toFeedbackRecord(row);
  }

  async listFeedback(turnId: string): Promise<FeedbackRecord[]> {
    return (await this.#database.rows<FeedbackRow>(selectFeedback, [turnId])).map((row) => toFeedbackRecord(row));
  }

  async recordSample(sample: NewSample): Promise<SampleRecord> {
    const encoded = {
      lossMask: encodeFloat64Blob(sample.lossMask, 'lossMask'),
      distillationGaps: sample.distillationGaps === null ? null : encodeFloat64Blob(sample.distillationGaps, 'distillationGaps'),
      teacherLogprobs: sample.teacherLogprobs === null ? null : encodeFloat64Blob(sample.teacherLogprobs, 'teacherLogprobs'),
    };
    await this.#database.transaction(async (client) => {
      // Locking the turn row serializes samples of one turn, so "at most one ready" holds.
      const [turn] = (
        await client.query<{ ordinal: number; response_length: number }>(
          'SELECT ordinal, length(response_token_ids) / 4 AS response_length FROM turns WHERE id = $1 FOR NO KEY UPDATE',
          [sample.turnId],
        )
      ).rows;
      if (turn === undefined) throw new ClawrlError('store_error', `cannot record a sample: unknown turn ${sample.turnId}`);
      checkNewSample(sample, turn.response_length);
      await client.query(
        "UPDATE samples SET status = 'dropped', drop_reason = 'superseded', updated_at = $1 WHERE turn_ordinal = $2 AND status = 'ready'",
        [sample.createdAt, turn.ordinal],
      );
      await client.query(
        `INSERT INTO samples (id, turn_ordinal, method, status, drop_reason, policy_version, judgement_id, feedback_id,
           score, rollout_group, rollout_turn_index, hint, loss_mask, distillation_gaps, teacher_logprobs, support, created_at, updated_at, user_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17, (SELECT user_id FROM turns WHERE ordinal = $2))`,
        [
          sample.id,
          turn.ordinal,
          sample.method,
          sample.status,
          sample.dropReason,
          sample.policyVersion,
          sample.judgementId,
          sample.feedbackId,
          sample.score,
          sample.group?.id ?? null,
          sample.group?.turnIndex ?? null,
          sample.hint,
          encoded.lossMask,
          encoded.distillationGaps,
          encoded.teacherLogprobs,
          sample.support === null ? null : JSON.stringify(sample.support),
          sample.createdAt,
        ],
      );
    });
    const [row] = await this.#database.rows<PostgresSampleRow>(`SELECT ${sampleColumns} WHERE sample.id = $1`, [sample.id]);
    if (row === undefined) throw new ClawrlError('store_error', `sample ${sample.id} vanished after its insert`);
    return toSampleRecord(this.#database, row);
  }

  async listSamples(options: ListSamplesOptions): Promise<SampleRecord[]> {
    const limit = options.limit ?? defaultListLimit;
    const offset = options.offset ?? 0;
    checkPaging(limit, offset);
    const rows = await this.#database.rows<PostgresSampleRow>(
      `SELECT ${sampleColumns}
       WHERE ($1::text IS NULL OR sample.status = $1) AND ($2::text IS NULL OR turn.id = $2)
       ORDER BY sample.ordinal LIMIT $3 OFFSET $4`,
      [options.status ?? null, options.turnId ?? null, limit, offset],
    );
    return Promise.all(rows.map((row) => toSampleRecord(this.#database, row)));
  }

  async updateSampleStatus(input: { ids: string[]; status: 'trained' | 'dropped'; reason?: string; at: number }): Promise<number> {
    const reason = input.status === 'dropped' ? (input.reason ?? 'dropped') : null;
    const result = await this.#database.query(
      "UPDATE samples SET status = $1, drop_reason = $2, updated_at = $3 WHERE id = ANY($4::text[]) AND status = 'ready'",
      [input.status, reason, input.at, input.ids],
    );
    return result.rowCount ?? 0;
  }

  async listTurnIds(options: ListTurnIdsOptions): Promise<string[]> {
    const limit = options.limit ?? defaultListLimit;
    const offset = options.offset ?? 0;
    checkPaging(limit, offset);
    const rows = await this.#database.rows<{ id: string }>(
      `SELECT id FROM turns
       WHERE started_at >= $1 AND (NOT $2::boolean OR (type = 'main' AND next_state IS NOT NULL))
       ORDER BY ordinal LIMIT $3 OFFSET $4`,
      [options.since ?? Number.MIN_SAFE_INTEGER, options.linkedOnly === true, limit, offset],
    );
    return rows.map((row) => row.id);
  }

  /** The full recount the counters of record_count_deltas replace: the contract suites check them against it. */
  async recount(): Promise<JudgingCounts> {
    const [row] = await this.#database.rows<JudgingCountsRow>(`
      SELECT
        (SELECT count(*) FROM (SELECT turn_ordinal FROM judgements UNION SELECT turn_ordinal FROM feedback) AS judged)::integer AS judged,
        (SELECT count(*) FROM judge_queue)::integer AS pending,
        (SELECT count(*) FROM judge_queue WHERE attempts > 0)::integer AS retrying,
        (SELECT count(*) FROM turns AS turn JOIN sessions AS session ON session.id = turn.session_id
          WHERE turn.type = 'main' AND turn.trainable AND turn.next_state IS NULL AND session.status = 'closed'
            AND NOT EXISTS (SELECT 1 FROM feedback WHERE feedback.turn_ordinal = turn.ordinal))::integer AS without_next_state,
        (SELECT count(*) FROM judgements WHERE wanted_hint AND hint IS NOT NULL)::integer AS hints_accepted,
        (SELECT count(*) FROM judgements WHERE wanted_hint AND hint IS NULL)::integer AS hints_rejected,
        (SELECT avg(latency_ms) FROM judgements) AS average_latency_ms,
        (SELECT coalesce(sum(readable_votes), 0) FROM judgements)::integer AS readable_votes,
        (SELECT coalesce(sum(agreeing_votes), 0) FROM judgements)::integer AS agreeing_votes,
        (SELECT count(*) FROM samples WHERE status = 'ready')::integer AS samples_ready,
        (SELECT count(*) FROM samples WHERE status = 'trained')::integer AS samples_trained,
        (SELECT count(*) FROM samples WHERE status = 'dropped')::integer AS samples_dropped,
        (SELECT count(*) FROM samples JOIN feedback ON feedback.id = samples.feedback_id
          WHERE samples.status = 'ready' AND feedback.rollout IS NOT NULL)::integer AS rollout_samples_ready,
        (SELECT count(*) FROM samples JOIN feedback ON feedback.id = samples.feedback_id
          WHERE samples.status = 'trained' AND feedback.rollout IS NOT NULL)::integer AS rollout_samples_trained,
        (SELECT count(*) FROM samples JOIN feedback ON feedback.id = samples.feedback_id
          WHERE samples.status = 'dropped' AND feedback.rollout IS NOT NULL)::integer AS rollout_samples_dropped
    `);
    if (row === undefined) throw new ClawrlError('store_error', 'judging counts query returned no row');
    return toJudgingCounts(row);
  }
}
