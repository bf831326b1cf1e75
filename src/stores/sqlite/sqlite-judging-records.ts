/**
 * The judging half of the SQLite record store: judge queue, judgements, feedback, samples. The
 * store delegates to it; it reads turns back through the callbacks the store gives it, so turn
 * reconstruction lives in one place.
 *
 * Every method runs synchronously inside the caller's `#run` wrapper; writes that touch more
 * than one row run in one IMMEDIATE transaction.
 */
import type Database from 'better-sqlite3';
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
import { checkNewSample, rolloutColumnOf, toFeedbackRecord, toJudgementRecord, toJudgingCounts, toSampleRecord, type SampleRow } from '../record-rows.js';
import { sqliteJudgingStatements, type SqliteJudgingStatements, type TurnKeyRow } from './sqlite-judging-statements.js';
import { encodeFloat64Blob } from '../../core/token-blob-codec.js';

const defaultListLimit = 100;

export interface TurnReader {
  turn(id: string): TurnRecord | null;
  /** Prompt and response ids of the turn with this ordinal. */
  tokens(ordinal: number): { promptTokenIds: number[]; responseTokenIds: number[] };
}

/** A turn leased to a judge worker, before its record is read back. */
export interface LeasedTurn {
  ordinal: number;
  generation: number;
  attempts: number;
}

function checkPaging(limit: number, offset: number): void {
  for (const [name, value] of [['limit', limit], ['offset', offset]] as const) {
    if (!Number.isInteger(value) || value < 0) {
      throw new ClawrlError('invalid_request', `${name} must be a non-negative integer, got ${value}`, { param: name });
    }
  }
}

export class SqliteJudgingRecords {
  readonly #statements: SqliteJudgingStatements;
  readonly #turns: TurnReader;
  readonly #lease: Database.Transaction<(options: ClaimTurnsOptions) => LeasedTurn[]>;
  readonly #release: Database.Transaction<(options: ReleaseTurnOptions) => boolean>;
  readonly #recordJudgement: Database.Transaction<(judgement: NewJudgement) => number>;
  readonly #recordFeedback: Database.Transaction<(feedback: NewFeedback) => number | null>;
  readonly #recordSample: Database.Transaction<(sample: NewSample) => void>;
  readonly #updateSampleStatus: Database.Transaction<(input: { ids: string[]; status: 'trained' | 'dropped'; reason: string | null; at: number }) => number>;

  constructor(database: Database.Database, turns: TurnReader) {
    this.#statements = sqliteJudgingStatements(database);
    this.#turns = turns;
    this.#lease = database.transaction((options) => this.#leaseDue(options));
    this.#release = database.transaction((options) => this.#releaseClaim(options));
    this.#recordJudgement = database.transaction((judgement) => this.#insertJudgement(judgement));
    this.#recordFeedback = database.transaction((feedback) => this.#insertFeedback(feedback));
    this.#recordSample = database.transaction((sample) => this.#insertSample(sample));
    this.#updateSampleStatus = database.transaction(({ ids, status, reason, at }) =>
      ids.reduce((changed, id) => changed + this.#statements.updateSampleStatus.run(status, reason, at, id).changes, 0),
    );
  }

  /** Runs inside linkNextState's transaction, after the link succeeded. */
  queueLinkedTurn(turnId: string, at: number): void {
    const turn = this.#statements.selectTurnKey.get(turnId);
    if (turn !== undefined && turn.type === 'main' && turn.trainable === 1) this.#statements.enqueue.run(turn.ordinal, at);
  }

  /** The write half of a claim: leases the due turns. */
  leaseDue(options: ClaimTurnsOptions): LeasedTurn[] {
    if (!Number.isInteger(options.limit) || options.limit < 0) {
      throw new ClawrlError('invalid_request', `limit must be a non-negative integer, got ${options.limit}`, { param: 'limit' });
    }
    return this.#lease.immediate(options);
  }

  /** The read half of a claim: the leased turns with their feedback and judgements. */
  claimsOf(leased: readonly LeasedTurn[]): JudgeClaim[] {
    return leased.map((row) => {
      const { id } = this.#turnKeyOf(row.ordinal);
      const turn = this.#turns.turn(id);
      if (turn === null) throw new ClawrlError('store_error', `queued turn ${id} vanished`);
      return {
        turn,
        generation: row.generation,
        attempts: row.attempts,
        feedback: this.#latestFeedback(row.ordinal),
        judgements: this.#judgementsOf(row.ordinal),
      };
    });
  }

  releaseTurn(options: ReleaseTurnOptions): boolean {
    return this.#release.immediate(options);
  }

  recordJudgement(judgement: NewJudgement): JudgementRecord {
    const id = this.#recordJudgement.immediate(judgement);
    return { ...judgement, id };
  }

  listJudgements(turnId: string): JudgementRecord[] {
    const turn = this.#statements.selectTurnKey.get(turnId);
    return turn === undefined ? [] : this.#judgementsOf(turn.ordinal);
  }

  recordFeedback(feedback: NewFeedback): FeedbackRecord | null {
    const id = this.#recordFeedback.immediate(feedback);
    return id === null ? null : { ...feedback, rollout: feedback.rollout ?? null, id };
  }

  getFeedback(turnId: string): FeedbackRecord | null {
    const turn = this.#statements.selectTurnKey.get(turnId);
    return turn === undefined ? null : this.#latestFeedback(turn.ordinal);
  }

  listFeedback(turnId: string): FeedbackRecord[] {
    const turn = this.#statements.selectTurnKey.get(turnId);
    return turn === undefined ? [] : this.#statements.listFeedback.all(turn.ordinal).map((row) => toFeedbackRecord(row));
  }

  insertSample(sample: NewSample): void {
    this.#recordSample.immediate(sample);
  }

  /** A sample just inserted, as a record (read after its commit). */
  sampleRecord(id: string): SampleRecord {
    const row = this.#statements.selectSample.get(id);
    if (row === undefined) throw new ClawrlError('store_error', `sample ${id} vanished after its insert`);
    return this.#toSampleRecord(row);
  }

  listSamples(options: ListSamplesOptions): SampleRecord[] {
    const limit = options.limit ?? defaultListLimit;
    const offset = options.offset ?? 0;
    checkPaging(limit, offset);
    const status = options.status ?? null;
    if (options.turnId !== undefined) {
      const key = this.#statements.selectTurnKey.get(options.turnId);
      if (key === undefined) return [];
      return this.#statements.listSamplesOfTurn.all({ status, turn: key.ordinal, limit, offset }).map((row) => this.#toSampleRecord(row));
    }
    return this.#statements.listSamples.all({ status, turn: null, limit, offset }).map((row) => this.#toSampleRecord(row));
  }

  updateSampleStatus(input: { ids: string[]; status: 'trained' | 'dropped'; reason?: string; at: number }): number {
    const reason = input.status === 'dropped' ? (input.reason ?? 'dropped') : null;
    return this.#updateSampleStatus.immediate({ ids: input.ids, status: input.status, reason, at: input.at });
  }

  listTurnIds(options: ListTurnIdsOptions): string[] {
    const limit = options.limit ?? defaultListLimit;
    const offset = options.offset ?? 0;
    checkPaging(limit, offset);
    return this.#statements.listTurnIds
      .all({ since: options.since ?? Number.MIN_SAFE_INTEGER, linkedOnly: options.linkedOnly === true ? 1 : 0, limit, offset })
      .map((row) => row.id);
  }

  recount(): JudgingCounts {
    const row = this.#statements.recount.get();
    if (row === undefined) throw new ClawrlError('store_error', 'judging counts query returned no row');
    return toJudgingCounts(row);
  }

  #leaseDue(options: ClaimTurnsOptions): LeasedTurn[] {
    const due = this.#statements.selectDue.all({ now: options.now, limit: options.limit });
    for (const row of due) this.#statements.lease.run(options.workerId, options.now + options.leaseMs, row.turn_ordinal);
    return due.map((row) => ({ ordinal: row.turn_ordinal, generation: row.generation, attempts: row.attempts }));
  }

  #releaseClaim(options: ReleaseTurnOptions): boolean {
    const turn = this.#statements.selectTurnKey.get(options.turnId);
    if (turn === undefined) return false;
    const { outcome } = options;
    const finished =
      outcome.kind === 'done'
        ? this.#statements.releaseDone.run(turn.ordinal, options.workerId, options.generation).changes
        : this.#statements.releaseFailed.run({
            ordinal: turn.ordinal,
            owner: options.workerId,
            generation: options.generation,
            retryAt: outcome.retryAt,
            error: outcome.error,
          }).changes;
    if (finished > 0) return true;
    return this.#statements.endLease.run(turn.ordinal, options.workerId).changes > 0;
  }

  #insertJudgement(judgement: NewJudgement): number {
    const turn = this.#requireTurn(judgement.turnId, 'record a judgement');
    this.#statements.deleteJudgementIdentity.run(turn.ordinal, judgement.judge, judgement.judgeModel, judgement.promptVersion);
    const verdicts = judgement.votes.filter((vote) => vote.kind === 'verdict' && vote.score !== null);
    const inserted = this.#statements.insertJudgement.run({
      turn_ordinal: turn.ordinal,
      judge: judgement.judge,
      judge_model: judgement.judgeModel,
      prompt_version: judgement.promptVersion,
      score: judgement.score,
      votes: JSON.stringify(judgement.votes),
      hint: judgement.hint,
      hint_candidates: JSON.stringify(judgement.hintCandidates),
      hint_selection: judgement.hintSelection,
      wanted_hint: judgement.votes.some((vote) => vote.kind === 'hint') ? 1 : 0,
      readable_votes: verdicts.length,
      agreeing_votes: verdicts.filter((vote) => vote.score === judgement.score).length,
      latency_ms: judgement.latencyMs,
      created_at: judgement.createdAt,
    });
    return Number(inserted.lastInsertRowid);
  }

  #insertFeedback(feedback: NewFeedback): number | null {
    const turn = this.#statements.selectTurnKey.get(feedback.turnId);
    if (turn === undefined) return null;
    const inserted = this.#statements.insertFeedback.run(
      turn.ordinal,
      feedback.score,
      feedback.text,
      feedback.hint,
      feedback.tenant,
      feedback.user,
      feedback.createdAt,
      rolloutColumnOf(feedback),
    );
    if (turn.type === 'main' && turn.trainable === 1) this.#statements.enqueue.run(turn.ordinal, feedback.createdAt);
    return Number(inserted.lastInsertRowid);
  }

  #insertSample(sample: NewSample): void {
    const turn = this.#requireTurn(sample.turnId, 'record a sample');
    checkNewSample(sample, turn.response_length);
    this.#statements.supersedeReady.run(sample.createdAt, turn.ordinal);
    this.#statements.insertSample.run({
      id: sample.id,
      turn_ordinal: turn.ordinal,
      method: sample.method,
      status: sample.status,
      drop_reason: sample.dropReason,
      policy_version: sample.policyVersion,
      judgement_id: sample.judgementId,
      feedback_id: sample.feedbackId,
      score: sample.score,
      rollout_group: sample.group?.id ?? null,
      rollout_turn_index: sample.group?.turnIndex ?? null,
      hint: sample.hint,
      loss_mask: encodeFloat64Blob(sample.lossMask, 'lossMask'),
      distillation_gaps: sample.distillationGaps === null ? null : encodeFloat64Blob(sample.distillationGaps, 'distillationGaps'),
      teacher_logprobs: sample.teacherLogprobs === null ? null : encodeFloat64Blob(sample.teacherLogprobs, 'teacherLogprobs'),
      support: sample.support === null ? null : JSON.stringify(sample.support),
      created_at: sample.createdAt,
      updated_at: sample.createdAt,
    });
  }

  #requireTurn(turnId: string, action: string): TurnKeyRow {
    const turn = this.#statements.selectTurnKey.get(turnId);
    if (turn === undefined) throw new ClawrlError('store_error', `cannot ${action}: unknown turn ${turnId}`);
    return turn;
  }

  #turnKeyOf(ordinal: number): { id: string } {
    const row = this.#statements.selectTurnIdByOrdinal.get(ordinal);
    if (row === undefined) throw new ClawrlError('store_error', `missing turn with ordinal ${ordinal}`);
    return row;
  }

  #judgementsOf(ordinal: number): JudgementRecord[] {
    return this.#statements.listJudgements.all(ordinal).map((row) => toJudgementRecord(row));
  }

  #latestFeedback(ordinal: number): FeedbackRecord | null {
    const row = this.#statements.latestFeedback.get(ordinal);
    return row === undefined ? null : toFeedbackRecord(row);
  }

  #toSampleRecord(row: SampleRow): SampleRecord {
    const rollout = this.#statements.selectRolloutLogprobs.get(row.turn_ordinal);
    if (rollout === undefined) throw new ClawrlError('store_error', `sample ${row.id}: its turn vanished`);
    return toSampleRecord(row, { ...this.#turns.tokens(row.turn_ordinal), rolloutLogprobs: rollout.logprobs });
  }

}
