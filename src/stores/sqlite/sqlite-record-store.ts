/**
 * The SQLite `RecordStore`. Built by `createSqliteRecordStore`; see that file for the schema.
 *
 * better-sqlite3 is synchronous: each method does its work in one transaction on the calling
 * tick and returns a settled promise, so a resolved write is already committed.
 */
import type Database from 'better-sqlite3';
import type { ChatMessage } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type {
  ClaimSamplesOptions,
  ClaimTurnsOptions,
  CommitTrainingStepOptions,
  ListSamplesOptions,
  ListSessionsOptions,
  ListTurnIdsOptions,
  RecordStore,
  ReleaseTurnOptions,
  TrainingSummary,
  TurnReference,
} from '../../spec/record-store.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';
import type {
  FeedbackRecord,
  JudgeClaim,
  JudgementRecord,
  NewFeedback,
  NewJudgement,
  NewPolicyVersion,
  NewSample,
  NewTurn,
  PolicyArtifactKind,
  PolicyVersionRecord,
  SampleRecord,
  SessionCloseReason,
  SessionRecord,
  StoreCounts,
  TrainingSample,
  TrainingStepRecord,
  TurnRecord,
  TurnType,
} from '../../spec/records.js';
import { canonicalJson } from '../../core/canonical-json.js';
import { createMessageChain, type MessageChain } from './message-chain.js';
import { createPromptSequenceCache, type PromptSequenceCache } from '../../core/prompt-sequence-cache.js';
import { SqliteJudgingRecords } from './sqlite-judging-records.js';
import { SqliteTrainingRecords } from './sqlite-training-records.js';
import { sqliteStatements, type SessionRow, type SqliteStatements, type TurnRow } from './sqlite-statements.js';
import {
  commonPrefixLength,
  decodeFloat64Blob,
  decodeInt32Blob,
  encodeFloat64Blob,
  encodeInt32Blob,
  reconstructPromptTokenIds,
} from '../../core/token-blob-codec.js';

const defaultListLimit = 100;

type SessionUpsert = Parameters<RecordStore['upsertSession']>[0];

export class SqliteRecordStore implements RecordStore {
  readonly #database: Database.Database;
  readonly #statements: SqliteStatements;
  readonly #messageChain: MessageChain;
  // The latest prompt+response sequence per (session, type), so recording the next turn does not
  // have to rebuild its base from the database.
  readonly #sequences: PromptSequenceCache = createPromptSequenceCache(32);
  readonly #upsertSession: Database.Transaction<(input: SessionUpsert) => void>;
  readonly #insertTurnTransaction: Database.Transaction<(turn: NewTurn) => { ordinal: number; index: number }>;
  readonly #linkNextState: Database.Transaction<(turnId: string, nextState: string, at: number) => boolean>;
  readonly #judging: SqliteJudgingRecords;
  readonly #training: SqliteTrainingRecords;
  #closed = false;

  constructor(database: Database.Database) {
    this.#database = database;
    this.#statements = sqliteStatements(database);
    this.#messageChain = createMessageChain(database);
    this.#upsertSession = database.transaction((input) => {
      this.#statements.upsertSession.run(input);
    });
    this.#insertTurnTransaction = database.transaction((turn) => this.#insertTurn(turn));
    this.#judging = new SqliteJudgingRecords(database, {
      turn: (id) => {
        const row = this.#statements.selectTurn.get(id);
        return row === undefined ? null : this.#toTurnRecord(row);
      },
      tokens: (ordinal) => this.#storedTokens(ordinal),
    });
    this.#training = new SqliteTrainingRecords(
      database,
      (turnId) => this.#judging.listSamples({ turnId, status: 'ready', limit: 1 })[0] ?? null,
    );
    this.#linkNextState = database.transaction((turnId, nextState, at) => {
      if (this.#statements.linkNextState.run(nextState, at, turnId).changes === 0) return false;
      this.#judging.queueLinkedTurn(turnId, at);
      return true;
    });
  }

  async upsertSession(input: { id: string; tenant: string | null; at: number }): Promise<void> {
    return this.#run('upsertSession', () =>
      this.#upsertSession.immediate({ id: input.id, tenant: input.tenant, at: input.at }),
    );
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    return this.#run('getSession', () => {
      const row = this.#statements.selectSession.get(id);
      return row === undefined ? null : this.#toSessionRecord(row);
    });
  }

  async listSessions(options: ListSessionsOptions = {}): Promise<SessionRecord[]> {
    const limit = options.limit ?? defaultListLimit;
    const offset = options.offset ?? 0;
    for (const [name, value] of [['limit', limit], ['offset', offset]] as const) {
      if (!Number.isInteger(value) || value < 0) {
        throw new ClawrlError('invalid_request', `${name} must be a non-negative integer, got ${value}`, {
          param: name,
        });
      }
    }
    return this.#run('listSessions', () => {
      const rows =
        options.status === undefined
          ? this.#statements.listSessions.all(limit, offset)
          : this.#statements.listSessionsByStatus.all(options.status, limit, offset);
      return rows.map((row) => this.#toSessionRecord(row));
    });
  }

  async closeSession(id: string, reason: SessionCloseReason, at: number): Promise<boolean> {
    return this.#run('closeSession', () => this.#statements.closeSession.run(at, reason, id).changes > 0);
  }

  async closeIdleSessions(idleSince: number, at: number): Promise<string[]> {
    return this.#run('closeIdleSessions', () =>
      this.#statements.closeIdleSessions.all(at, idleSince).map((row) => row.id),
    );
  }

  async recordTurn(turn: NewTurn): Promise<TurnRecord> {
    return this.#run('recordTurn', () => {
      const sequence = [...turn.promptTokenIds, ...turn.responseTokenIds];
      const { ordinal, index } = this.#insertTurnTransaction.immediate(turn);
      // Only after the commit: a rolled-back turn must never become another turn's base.
      this.#sequences.remember(turn.sessionId, turn.type, ordinal, sequence);
      return { ...turn, index, nextState: null, nextStateAt: null };
    });
  }

  async getTurn(id: string): Promise<TurnRecord | null> {
    return this.#run('getTurn', () => {
      const row = this.#statements.selectTurn.get(id);
      return row === undefined ? null : this.#toTurnRecord(row);
    });
  }

  async getLastMainTurn(sessionId: string): Promise<TurnReference | null> {
    return this.#run('getLastMainTurn', () => {
      const row = this.#statements.selectLastMainTurnReference.get(sessionId);
      return row === undefined ? null : { id: row.id, replyKey: row.reply_key, linked: row.next_state !== null };
    });
  }

  async linkNextState(turnId: string, nextState: ChatMessage[], at: number): Promise<boolean> {
    return this.#run('linkNextState', () => this.#linkNextState.immediate(turnId, canonicalJson(nextState), at));
  }

  async findByReplyKey(replyKey: string): Promise<{ sessionId: string; turnId: string } | null> {
    return this.#run('findByReplyKey', () => {
      const row = this.#statements.findByReplyKey.get(replyKey);
      return row === undefined ? null : { sessionId: row.session_id, turnId: row.id };
    });
  }

  async listTurnIds(options: ListTurnIdsOptions = {}): Promise<string[]> {
    return this.#run('listTurnIds', () => this.#judging.listTurnIds(options));
  }

  async claimTurnsForJudging(options: ClaimTurnsOptions): Promise<JudgeClaim[]> {
    return this.#run('claimTurnsForJudging', () => this.#judging.claimTurns(options));
  }

  async releaseTurn(options: ReleaseTurnOptions): Promise<boolean> {
    return this.#run('releaseTurn', () => this.#judging.releaseTurn(options));
  }

  async recordJudgement(judgement: NewJudgement): Promise<JudgementRecord> {
    return this.#run('recordJudgement', () => this.#judging.recordJudgement(judgement));
  }

  async listJudgements(turnId: string): Promise<JudgementRecord[]> {
    return this.#run('listJudgements', () => this.#judging.listJudgements(turnId));
  }

  async recordFeedback(feedback: NewFeedback): Promise<FeedbackRecord | null> {
    return this.#run('recordFeedback', () => this.#judging.recordFeedback(feedback));
  }

  async getFeedback(turnId: string): Promise<FeedbackRecord | null> {
    return this.#run('getFeedback', () => this.#judging.getFeedback(turnId));
  }

  async recordSample(sample: NewSample): Promise<SampleRecord> {
    return this.#run('recordSample', () => this.#judging.recordSample(sample));
  }

  async listSamples(options: ListSamplesOptions = {}): Promise<SampleRecord[]> {
    return this.#run('listSamples', () => this.#judging.listSamples(options));
  }

  async updateSampleStatus(input: {
    ids: string[];
    status: 'trained' | 'dropped';
    reason?: string;
    at: number;
  }): Promise<number> {
    return this.#run('updateSampleStatus', () => this.#judging.updateSampleStatus(input));
  }

  // Training (migration 3), delegated like judging.
  async claimSamplesForTraining(options: ClaimSamplesOptions): Promise<TrainingSample[]> {
    return this.#run('claimSamplesForTraining', () => this.#training.claimSamples(options));
  }
  async releaseTrainingSamples(input: { workerId: string; ids?: string[] }): Promise<number> {
    return this.#run('releaseTrainingSamples', () => this.#training.releaseSamples(input));
  }
  async recordPolicyVersion(version: NewPolicyVersion, options: { activate: boolean }): Promise<PolicyVersionRecord> {
    return this.#run('recordPolicyVersion', () => this.#training.recordVersion(version, options.activate));
  }
  async commitTrainingStep(options: CommitTrainingStepOptions): Promise<TrainingStepRecord> {
    return this.#run('commitTrainingStep', () => this.#training.commitStep(options));
  }
  async activatePolicyVersion(version: PolicyVersion, at: number): Promise<boolean> {
    return this.#run('activatePolicyVersion', () => this.#training.activate(version, at));
  }
  async listPolicyVersions(): Promise<PolicyVersionRecord[]> {
    return this.#run('listPolicyVersions', () => this.#training.listVersions());
  }
  async getPolicyArtifact(version: PolicyVersion): Promise<{ kind: PolicyArtifactKind; files: Record<string, Uint8Array> } | null> {
    return this.#run('getPolicyArtifact', () => this.#training.artifact(version));
  }
  async listTrainingSteps(options: { limit?: number; offset?: number } = {}): Promise<TrainingStepRecord[]> {
    return this.#run('listTrainingSteps', () => this.#training.listSteps(options));
  }
  async trainingSummary(): Promise<TrainingSummary> {
    return this.#run('trainingSummary', () => this.#training.summary());
  }
  async getSessionPolicyVersion(sessionId: string): Promise<PolicyVersion | null> {
    return this.#run('getSessionPolicyVersion', () => this.#training.sessionVersion(sessionId));
  }

  async counts(): Promise<StoreCounts> {
    return this.#run('counts', () => {
      const row = this.#statements.counts.get();
      if (row === undefined) throw new ClawrlError('store_error', 'counts query returned no row');
      return {
        sessions: { open: row.open_sessions, closed: row.closed_sessions },
        turns: {
          main: row.main_turns,
          side: row.side_turns,
          aborted: row.aborted_turns,
          failed: row.failed_turns,
          trainable: row.trainable_turns,
        },
        linked: row.linked_turns,
        judging: this.#judging.counts(),
      };
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#sequences.clear();
    try {
      this.#database.close();
    } catch (error) {
      throw new ClawrlError('store_error', 'failed to close the SQLite record store', { cause: error });
    }
  }

  #run<T>(operation: string, work: () => T): T {
    if (this.#closed) throw new ClawrlError('store_error', `${operation}: the record store is closed`);
    try {
      return work();
    } catch (error) {
      if (ClawrlError.isInstance(error)) throw error;
      throw new ClawrlError('store_error', `${operation} failed: ${String(error)}`, { cause: error });
    }
  }

  /** Runs inside recordTurn's transaction. */
  #insertTurn(turn: NewTurn): { ordinal: number; index: number } {
    const session = this.#statements.selectSession.get(turn.sessionId);
    if (session === undefined) {
      throw new ClawrlError('store_error', `cannot record turn ${turn.id}: unknown session ${turn.sessionId}`);
    }
    if (this.#statements.selectTurnOrdinal.get(turn.id) !== undefined) {
      throw new ClawrlError('store_error', `turn ${turn.id} is already recorded`);
    }
    const index = turn.type === 'main' ? session.main_turns : -1;
    this.#statements.countTurn.run(turn.type === 'main' ? 1 : 0, turn.type === 'side' ? 1 : 0, turn.sessionId);

    const base = this.#promptBase(turn.sessionId, turn.type, turn.promptTokenIds);
    const inserted = this.#statements.insertTurn.run({
      id: turn.id,
      session_id: turn.sessionId,
      turn_index: index,
      type: turn.type,
      status: turn.status,
      trainable: turn.trainable ? 1 : 0,
      tenant: turn.tenant,
      model: turn.model,
      policy_version: turn.policyVersion,
      messages_tip_id: this.#messageChain.store(turn.messages),
      message_count: turn.messages.length,
      tool_set_id: this.#messageChain.storeTools(turn.tools),
      sampling: canonicalJson(turn.sampling),
      prompt_base_ordinal: base.ordinal,
      prompt_prefix_length: base.prefixLength,
      prompt_suffix: encodeInt32Blob(turn.promptTokenIds.slice(base.prefixLength), 'promptTokenIds'),
      prompt_length: turn.promptTokenIds.length,
      response_token_ids: encodeInt32Blob(turn.responseTokenIds, 'responseTokenIds'),
      logprobs: encodeFloat64Blob(turn.logprobs, 'logprobs'),
      response: canonicalJson(turn.response),
      finish_reason: turn.finishReason,
      started_at: turn.timings.startedAt,
      first_token_at: turn.timings.firstTokenAt,
      ended_at: turn.timings.endedAt,
      error: turn.error,
      reply_key: turn.replyKey,
    });
    return { ordinal: Number(inserted.lastInsertRowid), index };
  }

  /** The session's previous turn of the same type, and how much of its sequence this prompt repeats. */
  #promptBase(
    sessionId: string,
    type: TurnType,
    prompt: readonly number[],
  ): { ordinal: number | null; prefixLength: number } {
    const previous = this.#statements.selectLastTurnOrdinalOfType.get(sessionId, type);
    if (previous === undefined) return { ordinal: null, prefixLength: 0 };
    const sequence =
      this.#sequences.recall(sessionId, type, previous.ordinal) ?? this.#storedSequence(previous.ordinal);
    const prefixLength = commonPrefixLength(sequence, prompt);
    return prefixLength === 0 ? { ordinal: null, prefixLength: 0 } : { ordinal: previous.ordinal, prefixLength };
  }

  /** A stored turn's prompt followed by its response. */
  #storedSequence(ordinal: number): number[] {
    const { promptTokenIds, responseTokenIds } = this.#storedTokens(ordinal);
    return [...promptTokenIds, ...responseTokenIds];
  }

  #storedTokens(ordinal: number): { promptTokenIds: number[]; responseTokenIds: number[] } {
    const links = this.#statements.selectPromptChain.all(ordinal).map((link) => ({
      prefixLength: link.prompt_prefix_length,
      suffix: decodeInt32Blob(link.prompt_suffix),
      responseTokenIds: decodeInt32Blob(link.response_token_ids),
    }));
    const last = links.at(-1);
    if (last === undefined) throw new ClawrlError('store_error', `missing turn with ordinal ${ordinal}`);
    return { promptTokenIds: reconstructPromptTokenIds(links), responseTokenIds: last.responseTokenIds };
  }

  #toSessionRecord(row: SessionRow): SessionRecord {
    return {
      id: row.id,
      tenant: row.tenant,
      status: row.status,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      closedAt: row.closed_at,
      closeReason: row.close_reason,
      turnIds: this.#statements.selectMainTurnIds.all(row.id).map((turn) => turn.id),
      sideTurns: row.side_turns,
    };
  }

  #toTurnRecord(row: TurnRow): TurnRecord {
    const responseTokenIds = decodeInt32Blob(row.response_token_ids);
    const promptTokenIds =
      row.prompt_base_ordinal === null
        ? decodeInt32Blob(row.prompt_suffix)
        : this.#storedTokens(row.ordinal).promptTokenIds;
    if (promptTokenIds.length !== row.prompt_length) {
      throw new ClawrlError(
        'store_error',
        `turn ${row.id}: rebuilt ${promptTokenIds.length} prompt ids, expected ${row.prompt_length}`,
      );
    }
    const messages = this.#messageChain.load(row.messages_tip_id);
    if (messages.length !== row.message_count) {
      throw new ClawrlError(
        'store_error',
        `turn ${row.id}: rebuilt ${messages.length} messages, expected ${row.message_count}`,
      );
    }
    return {
      id: row.id,
      sessionId: row.session_id,
      type: row.type,
      status: row.status,
      trainable: row.trainable === 1,
      tenant: row.tenant,
      model: row.model,
      policyVersion: row.policy_version,
      messages,
      tools: this.#messageChain.loadTools(row.tool_set_id),
      sampling: JSON.parse(row.sampling) as TurnRecord['sampling'],
      promptTokenIds,
      responseTokenIds,
      logprobs: decodeFloat64Blob(row.logprobs),
      response: JSON.parse(row.response) as ChatMessage,
      finishReason: row.finish_reason,
      timings: { startedAt: row.started_at, firstTokenAt: row.first_token_at, endedAt: row.ended_at },
      error: row.error,
      replyKey: row.reply_key,
      index: row.turn_index,
      nextState: row.next_state === null ? null : (JSON.parse(row.next_state) as ChatMessage[]),
      nextStateAt: row.next_state_at,
    };
  }
}
