/**
 * The SQLite `RecordStore`. Built by `createSqliteRecordStore`; see that file for the schema.
 *
 * better-sqlite3 is synchronous: reads run on the calling tick. Writes are group-committed
 * (`group-commit.ts`): queued, run together in one transaction after the loop's pending I/O, each
 * in its own savepoint, and resolved only once that transaction has committed — so a resolved
 * write is durable, as the seam promises, while many concurrent writes share one commit.
 */
import type Database from 'better-sqlite3';
import type { ChatMessage } from '../../spec/chat.js';
import type { DashboardQueries } from '../../spec/dashboard-queries.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ClaimTurnsOptions, ReleaseTurnOptions } from '../../spec/judging-queue.js';
import type { LineageOptions, TrainingSummary } from '../../spec/policy-registry.js';
import type { ErasureResult, ErasureTarget, TaintedVersion } from '../../spec/record-erasure.js';
import type { ListSamplesOptions, ListSessionsOptions, ListTurnIdsOptions } from '../../spec/record-reads.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { ClaimSamplesOptions, CommitTrainingStepOptions, ReadySamplesOfUser } from '../../spec/training-queue.js';
import type { TurnReference } from '../../spec/turn-log.js';
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
} from '../../spec/records.js';
import { canonicalJson } from '../canonical-json.js';
import { createGroupCommit, isSqliteBusy, type GroupCommit } from './group-commit.js';
import { createMessageChain, type MessageChain } from './message-chain.js';
import { createPromptSequenceCache, type PromptSequenceCache } from '../prompt-sequence-cache.js';
import { createSharedPromptRoots, type SharedPromptRoots } from '../shared-prompt-roots.js';
import { toRecountedStoreCounts, toStoreCounts } from '../record-counts.js';
import { createRecordEvents, type RecordEvents, type RecordEventsOptions } from '../record-events.js';
import { createSqliteDashboardQueries } from './sqlite-dashboard-queries.js';
import { eraseInBatches } from '../erase-in-batches.js';
import { eraseSqliteRows, erasureBatchTurns, listSqliteLineage, listSqliteTaintedVersions, requeueSqliteSamplesOf, retireSqliteVersions } from './sqlite-erasure.js';
import { SqliteJudgingRecords } from './sqlite-judging-records.js';
import type { PolicyVersionState, SetPolicyVersionStateOptions } from '../../spec/policy-version-state.js';
import { SqliteTrainingRecords } from './sqlite-training-records.js';
import { sqliteStatements, type SqliteStatements } from './sqlite-statements.js';
import { SqliteTurnReader } from './sqlite-turn-reader.js';
import { insertSqliteTurn } from './sqlite-turn-writer.js';
import { SqliteUserMemory } from './sqlite-user-memory.js';
import type { EditMemoryResult, MemoryEdit, MemoryEntryRecord, NewMemoryEntry, RememberResult, UserSummary } from '../../spec/user-memory.js';

const defaultListLimit = 100;
// How long an erasure waits for readers to let the WAL be truncated.
const walTruncateWaitMs = 10_000;

function storeErrorOf(operation: string, error: unknown): ClawrlError {
  if (ClawrlError.isInstance(error)) return error;
  return new ClawrlError('store_error', `${operation} failed: ${String(error)}`, { cause: error });
}

export class SqliteRecordStore implements RecordStore {
  readonly #database: Database.Database;
  readonly #statements: SqliteStatements;
  readonly #messageChain: MessageChain;
  readonly #reader: SqliteTurnReader;
  // The latest prompt+response sequence per (session, type), so recording the next turn does not
  // have to rebuild its base from the database.
  readonly #sequences: PromptSequenceCache = createPromptSequenceCache();
  // Recent whole-stored prompts, the base of a session's first turn (its system prompt and tools).
  readonly #roots: SharedPromptRoots = createSharedPromptRoots();
  readonly #group: GroupCommit;
  readonly #judging: SqliteJudgingRecords;
  readonly #training: SqliteTrainingRecords;
  readonly #memory: SqliteUserMemory;
  readonly dashboard: DashboardQueries;
  #closed = false;
  readonly #afterClose: (() => Promise<void> | undefined) | undefined;
  readonly #events: RecordEvents;

  /** Set when the connection never waits for a lock inside SQLite (`createSqliteRecordStore`'s `neverWait`). */
  readonly #retryWhenBusy: { delayMs: number; giveUpAfterMs: number } | undefined;

  constructor(
    database: Database.Database,
    options: {
      afterClose?: () => Promise<void> | undefined;
      retryWhenBusy?: { delayMs: number; giveUpAfterMs: number };
      events?: RecordEventsOptions;
    } = {},
  ) {
    this.#events = createRecordEvents(options.events);
    this.#retryWhenBusy = options.retryWhenBusy;
    this.#database = database;
    this.#afterClose = options.afterClose;
    this.#statements = sqliteStatements(database);
    this.#messageChain = createMessageChain(database);
    this.#reader = new SqliteTurnReader(this.#statements, this.#messageChain);
    this.#group = createGroupCommit(database, options.retryWhenBusy === undefined ? {} : { retryWhenBusy: options.retryWhenBusy });
    this.#judging = new SqliteJudgingRecords(database, {
      turn: (id) => this.#turnOf(id),
      tokens: (ordinal) => this.#reader.tokens(ordinal),
    });
    this.dashboard = createSqliteDashboardQueries(database, (operation, work) => this.#run(operation, work));
    this.#memory = new SqliteUserMemory(database);
    this.#training = new SqliteTrainingRecords(
      database,
      (turnId) => this.#judging.listSamples({ turnId, status: 'ready', limit: 1 })[0] ?? null,
    );
  }

  async upsertSession(input: { id: string; tenant: string | null; user: string | null; at: number }): Promise<void> {
    // Every write runs atomically inside the group commit (alone, or in its own savepoint). Most
    // requests continue an open session: the cheaper touch does for those.
    return this.#write('upsertSession', () => {
      if (this.#statements.touchOpenSession.run(input.at, input.id).changes === 0) this.#statements.upsertSession.run(input);
    });
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    return this.#run('getSession', () => {
      const row = this.#statements.selectSession.get(id);
      return row === undefined ? null : this.#reader.session(row);
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
        options.user !== undefined
          ? this.#statements.listSessionsOfUser.all({ user: options.user, tenant: options.tenant ?? null, status: options.status ?? null, limit, offset })
          : options.tenant !== undefined
          ? this.#statements.listSessionsOfTenant.all({ tenant: options.tenant, status: options.status ?? null, limit, offset })
          : options.status === undefined
          ? this.#statements.listSessions.all(limit, offset)
          : this.#statements.listSessionsByStatus.all(options.status, limit, offset);
      return rows.map((row) => this.#reader.session(row));
    });
  }

  async closeSession(id: string, reason: SessionCloseReason, at: number): Promise<boolean> {
    return this.#write('closeSession', () => this.#statements.closeSession.run(at, reason, id).changes > 0);
  }

  async closeIdleSessions(idleSince: number, at: number): Promise<string[]> {
    return this.#write('closeIdleSessions', () =>
      this.#statements.closeIdleSessions.all(at, idleSince).map((row) => row.id),
    );
  }

  async recordTurn(turn: NewTurn): Promise<TurnRecord> {
    const { index } = await this.#write(
      'recordTurn',
      () => insertSqliteTurn({ statements: this.#statements, messageChain: this.#messageChain, reader: this.#reader, sequences: this.#sequences, roots: this.#roots }, turn),
      // Only after the commit: a rolled-back turn must never become another turn's base, nor a
      // rolled-back node a known one.
      ({ ordinal, learned, root }) => {
        this.#sequences.remember(turn.sessionId, turn.type, ordinal, turn.promptTokenIds, turn.responseTokenIds);
        if (root) this.#roots.remember(ordinal, turn.promptTokenIds);
        this.#messageChain.remember(learned);
      },
    );
    const recorded: TurnRecord = { ...turn, untrainableReason: turn.untrainableReason ?? null, supersededBy: turn.supersededBy ?? null, index, nextState: null, nextStateAt: null };
    this.#events.turnRecorded(recorded);
    return recorded;
  }

  async getTurn(id: string): Promise<TurnRecord | null> {
    return this.#run('getTurn', () => this.#turnOf(id));
  }

  async getTurns(ids: readonly string[]): Promise<TurnRecord[]> {
    return this.#run('getTurns', () => [...new Set(ids)].flatMap((id) => this.#turnOf(id) ?? []));
  }

  #turnOf(id: string): TurnRecord | null {
    const row = this.#statements.selectTurn.get(id);
    return row === undefined ? null : this.#reader.turn(row);
  }

  async getLastMainTurn(sessionId: string): Promise<TurnReference | null> {
    return this.#run('getLastMainTurn', () => {
      const row = this.#statements.selectLastMainTurnReference.get(sessionId);
      return row === undefined ? null : { id: row.id, replyKey: row.reply_key, linked: row.linked === 1 };
    });
  }

  async linkNextState(turnId: string, nextState: ChatMessage[], at: number): Promise<boolean> {
    const serialized = canonicalJson(nextState);
    return this.#write('linkNextState', () => {
      if (this.#statements.linkNextState.run(serialized, at, turnId).changes === 0) return false;
      this.#judging.queueLinkedTurn(turnId, at);
      return true;
    });
  }

  async markSuperseded(turnId: string, supersededBy: string): Promise<boolean> {
    return this.#write('markSuperseded', () => {
      const marked = this.#statements.markSuperseded.get(supersededBy, turnId);
      if (marked === undefined) return false;
      this.#statements.dequeueTurn.run(marked.ordinal);
      return true;
    });
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
    // The lease is the write; rebuilding the claimed turns is reading, done after the commit so the
    // write lock is held only for the lease.
    const leased = await this.#write('claimTurnsForJudging', () => this.#judging.leaseDue(options));
    return this.#run('claimTurnsForJudging', () => this.#judging.claimsOf(leased));
  }

  async releaseTurn(options: ReleaseTurnOptions): Promise<boolean> {
    return this.#write('releaseTurn', () => this.#judging.releaseTurn(options));
  }

  async recordJudgement(judgement: NewJudgement): Promise<JudgementRecord> {
    return this.#write('recordJudgement', () => this.#judging.recordJudgement(judgement));
  }

  async listJudgements(turnId: string): Promise<JudgementRecord[]> {
    return this.#run('listJudgements', () => this.#judging.listJudgements(turnId));
  }

  async recordFeedback(feedback: NewFeedback): Promise<FeedbackRecord | null> {
    return this.#write('recordFeedback', () => this.#judging.recordFeedback(feedback));
  }

  async getFeedback(turnId: string): Promise<FeedbackRecord | null> {
    return this.#run('getFeedback', () => this.#judging.getFeedback(turnId));
  }

  async listFeedback(turnId: string): Promise<FeedbackRecord[]> {
    return this.#run('listFeedback', () => this.#judging.listFeedback(turnId));
  }

  async recordSample(sample: NewSample): Promise<SampleRecord> {
    await this.#write('recordSample', () => this.#judging.insertSample(sample));
    const recorded = await this.#run('recordSample', () => this.#judging.sampleRecord(sample.id));
    this.#events.sampleRecorded(recorded);
    return recorded;
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
    return this.#write('updateSampleStatus', () => this.#judging.updateSampleStatus(input));
  }

  // Training (migration 3), delegated like judging.
  async claimSamplesForTraining(options: ClaimSamplesOptions): Promise<TrainingSample[]> {
    return this.#write('claimSamplesForTraining', () => this.#training.claimSamples(options));
  }
  async readySamplesByUser(now: number): Promise<ReadySamplesOfUser[]> {
    return this.#run('readySamplesByUser', () => this.#training.readySamplesByUser(now));
  }
  async releaseTrainingSamples(input: { workerId: string; ids?: string[] }): Promise<number> {
    return this.#write('releaseTrainingSamples', () => this.#training.releaseSamples(input));
  }
  async recordPolicyVersion(version: NewPolicyVersion, options: { activate: boolean }): Promise<PolicyVersionRecord> {
    return this.#write('recordPolicyVersion', () => this.#training.recordVersion(version, options.activate));
  }
  async commitTrainingStep(options: CommitTrainingStepOptions): Promise<TrainingStepRecord> {
    return this.#write('commitTrainingStep', () => this.#training.commitStep(options));
  }
  async activatePolicyVersion(version: PolicyVersion, at: number, options: { reason?: string } = {}): Promise<boolean> {
    return this.#write('activatePolicyVersion', () => this.#training.activate(version, at, options.reason));
  }
  async setPolicyVersionState(version: PolicyVersion, state: PolicyVersionState, options: SetPolicyVersionStateOptions): Promise<boolean> {
    return this.#write('setPolicyVersionState', () => this.#training.setState(version, state, options));
  }
  async listPolicyVersions(options: LineageOptions = {}): Promise<PolicyVersionRecord[]> {
    return this.#run('listPolicyVersions', () => this.#training.listVersions(options));
  }
  async getPolicyArtifact(version: PolicyVersion): Promise<{ kind: PolicyArtifactKind; files: Record<string, Uint8Array> } | null> {
    return this.#run('getPolicyArtifact', () => this.#training.artifact(version));
  }
  async listTrainingSteps(options: { limit?: number; offset?: number } = {}): Promise<TrainingStepRecord[]> {
    return this.#run('listTrainingSteps', () => this.#training.listSteps(options));
  }
  async trainingSummary(options: LineageOptions = {}): Promise<TrainingSummary> {
    return this.#run('trainingSummary', () => this.#training.summary(options));
  }
  async getSessionPolicyVersion(sessionId: string): Promise<PolicyVersion | null> {
    return this.#run('getSessionPolicyVersion', () => this.#training.sessionVersion(sessionId));
  }

  // User memory (migration 14), delegated like training.
  async remember(entry: NewMemoryEntry, maximumEntries: number): Promise<RememberResult> {
    return this.#write('remember', () => this.#memory.remember(entry, maximumEntries));
  }
  async listMemory(user: string): Promise<MemoryEntryRecord[]> {
    return this.#run('listMemory', () => this.#memory.list(user));
  }
  async editMemory(user: string, id: number, edit: MemoryEdit, at: number): Promise<EditMemoryResult> {
    return this.#write('editMemory', () => this.#memory.edit(user, id, edit, at));
  }
  async forgetMemory(user: string, id: number): Promise<boolean> {
    return this.#write('forgetMemory', () => this.#memory.forget(user, id));
  }
  async listUsers(options: { tenant?: string }): Promise<UserSummary[]> {
    return this.#run('listUsers', () => this.#memory.listUsers(options.tenant ?? null));
  }

  async erase(target: ErasureTarget, at: number): Promise<ErasureResult> {
    const forget = (): void => {
      this.#messageChain.forget();
      this.#sequences.clear();
      this.#roots.clear();
    };
    const result = await eraseInBatches(target, erasureBatchTurns, () =>
      this.#write(
        'erase',
        () => {
          const erased = eraseSqliteRows(this.#database, this.#reader, target, at);
          // Inside the write too: a turn recorded after it in the same group must not use a forgotten base.
          forget();
          return erased;
        },
        forget,
      ),
    );
    return { ...result, receipt: { ...result.receipt, storageWiped: await this.#truncateWal() } };
  }

  /** Truncates the WAL, whose older frames still hold erased rows; retried while readers keep it busy. */
  async #truncateWal(): Promise<boolean> {
    if (this.#database.memory) return true;
    const startedAt = performance.now();
    for (;;) {
      try {
        const [row] = this.#database.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
        if (row?.busy === 0) return true;
      } catch (error) {
        if (!isSqliteBusy(error)) throw storeErrorOf('erase', error);
      }
      if (performance.now() - startedAt >= walTruncateWaitMs) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async listTaintedVersions(): Promise<TaintedVersion[]> {
    return this.#run('listTaintedVersions', () => listSqliteTaintedVersions(this.#database));
  }
  async retireVersions(versions: readonly PolicyVersion[], at: number): Promise<number> {
    return this.#write('retireVersions', () => retireSqliteVersions(this.#database, versions, at));
  }
  async requeueSamplesOf(versions: readonly PolicyVersion[], at: number): Promise<number> {
    return this.#write('requeueSamplesOf', () => requeueSqliteSamplesOf(this.#database, versions, at));
  }
  async listLineage(version: PolicyVersion): Promise<{ sampleId: string; erased: boolean }[]> {
    return this.#run('listLineage', () => listSqliteLineage(this.#database, version));
  }

  async counts(): Promise<StoreCounts> {
    return this.#run('counts', () => toStoreCounts(this.#statements.counters.all()));
  }

  /** Counts the rows themselves (scans whole tables): what `counts()` must equal, for the tests. */
  async recount(): Promise<StoreCounts> {
    return this.#run('recount', () => toRecountedStoreCounts(this.#statements.recount.get(), this.#judging.recount()));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#sequences.clear();
    this.#roots.clear();
    try {
      // Queued writes were accepted before the close: commit them first, waiting for the lock if
      // another connection holds it (nothing else is served any more).
      if (this.#retryWhenBusy !== undefined) this.#database.pragma(`busy_timeout = ${this.#retryWhenBusy.giveUpAfterMs}`);
      this.#group.flush();
      this.#database.close();
    } catch (error) {
      throw new ClawrlError('store_error', 'failed to close the SQLite record store', { cause: error });
    } finally {
      await this.#afterClose?.();
    }
  }

  /** A read, run at once; on a connection that never waits, retried later while the database is locked. */
  async #run<T>(operation: string, work: () => T): Promise<T> {
    const startedAt = performance.now();
    for (;;) {
      if (this.#closed) throw new ClawrlError('store_error', `${operation}: the record store is closed`);
      try {
        return work();
      } catch (error) {
        const retry = this.#retryWhenBusy;
        if (retry === undefined || !isSqliteBusy(error) || performance.now() - startedAt >= retry.giveUpAfterMs) throw storeErrorOf(operation, error);
      }
      await new Promise((resolve) => setTimeout(resolve, this.#retryWhenBusy?.delayMs));
    }
  }

  /** A write through the group commit: resolves once committed. */
  async #write<T>(operation: string, work: () => T, afterCommit?: (result: T) => void): Promise<T> {
    if (this.#closed) throw new ClawrlError('store_error', `${operation}: the record store is closed`);
    try {
      return await this.#group.write(work, afterCommit);
    } catch (error) {
      throw storeErrorOf(operation, error);
    }
  }
}
