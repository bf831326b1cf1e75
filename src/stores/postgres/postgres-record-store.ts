/**
 * The Postgres `RecordStore`. Built by `createPostgresRecordStore`; the tables are those of
 * `postgres-migrations.ts`, the same layout as the SQLite store. A write resolves after its
 * transaction commits, which Postgres makes durable before it answers (synchronous_commit on).
 *
 * Several processes may share one schema: per-session turn indexes come from a counter in the
 * session row, updated first in `recordTurn`, so concurrent turns of a session serialize on that
 * row lock; the judge queue is claimed with `FOR UPDATE SKIP LOCKED` (see the judging records).
 */
import type { DashboardQueries } from '../../spec/dashboard-queries.js';
import { createPostgresDashboardQueries } from './postgres-dashboard-queries.js';
import type { ChatMessage } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';
import type { ClaimTurnsOptions, ReleaseTurnOptions } from '../../spec/judging-queue.js';
import type { LineageOptions, TrainingSummary } from '../../spec/policy-registry.js';
import type { ListSamplesOptions, ListSessionsOptions, ListTurnIdsOptions } from '../../spec/record-reads.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { ClaimSamplesOptions, CommitTrainingStepOptions, ReadySamplesOfUser } from '../../spec/training-queue.js';
import type { TurnReference } from '../../spec/turn-log.js';
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
import { createPromptSequenceCache } from '../prompt-sequence-cache.js';
import { createSharedPromptRoots } from '../shared-prompt-roots.js';
import { encodeFloat64Blob, encodeInt32Blob } from '../../core/token-blob-codec.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { PostgresJudgingRecords } from './postgres-judging-records.js';
import type { PolicyVersionState, SetPolicyVersionStateOptions } from '../../spec/policy-version-state.js';
import { PostgresTrainingRecords } from './postgres-training-records.js';
import { PostgresUserMemory } from './postgres-user-memory.js';
import type { EditMemoryResult, MemoryEdit, MemoryEntryRecord, NewMemoryEntry, RememberResult, UserSummary } from '../../spec/user-memory.js';
import { checkPaging } from './postgres-paging.js';
import { insertTurn } from './postgres-turn-writer.js';
import { toRecountedStoreCounts, toStoreCounts, type RecountRow } from '../record-counts.js';
import { createRecordEvents, type RecordEvents, type RecordEventsOptions } from '../record-events.js';
import {
  selectTurnRow,
  sessionColumns,
  sessionRecordOf,
  toTurnRecord,
  type SessionRow,
  type TurnRow,
} from './postgres-turn-rows.js';

import { erasedTables, erasePostgresRows, listPostgresLineage, listPostgresTaintedVersions, requeuePostgresSamplesOf, retirePostgresVersions } from './postgres-erasure.js';
import type { ErasureResult, ErasureTarget, TaintedVersion } from '../../spec/record-erasure.js';

const defaultListLimit = 100;
const uniqueViolation = '23505';

function isDuplicateTurnId(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    error.code === uniqueViolation &&
    'constraint' in error &&
    error.constraint === 'turns_id_key'
  );
}

function isMissingPromptBase(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === '23503' && 'constraint' in error && error.constraint === 'turns_prompt_base_ordinal_fkey';
}

// Each write adds one to a few delta rows; a thousand keep the counts' read to a millisecond or so.
const foldDeltasAbove = 1_000;

export class PostgresRecordStore implements RecordStore {
  readonly #database: PostgresDatabase;
  readonly #judging: PostgresJudgingRecords;
  readonly #training: PostgresTrainingRecords;
  readonly #memory: PostgresUserMemory;
  readonly dashboard: DashboardQueries;
  // The latest prompt+response sequence per (session, type) this process wrote, so recording the
  // next turn does not rebuild its base; keyed by ordinal, so another process's turn is never mistaken for it.
  readonly #sequences = createPromptSequenceCache();
  // Recent whole-stored prompts this process wrote, the base of a session's first turn.
  readonly #roots = createSharedPromptRoots();
  readonly #events: RecordEvents;

  constructor(database: PostgresDatabase, events?: RecordEventsOptions) {
    this.#database = database;
    this.#events = createRecordEvents(events);
    this.#judging = new PostgresJudgingRecords(database, (client, id) => this.#loadTurn(client, id));
    this.#training = new PostgresTrainingRecords(database);
    this.#memory = new PostgresUserMemory(database);
    this.dashboard = createPostgresDashboardQueries(database);
  }

  async upsertSession(input: { id: string; tenant: string | null; user: string | null; at: number }): Promise<void> {
    await this.#database.run('upsertSession', () =>
      this.#database.query(
        `INSERT INTO sessions (id, tenant, user_id, status, created_at, updated_at) VALUES ($1, $2, $4, 'open', $3, $3)
         ON CONFLICT (id) DO UPDATE SET status = 'open', closed_at = NULL, close_reason = NULL,
           updated_at = greatest(sessions.updated_at, excluded.updated_at)`,
        [input.id, input.tenant, input.at, input.user],
      ),
    );
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    return this.#database.run('getSession', async () => {
      const [row] = await this.#database.rows<SessionRow>(`SELECT ${sessionColumns} FROM sessions AS session WHERE id = $1`, [id]);
      return row === undefined ? null : sessionRecordOf(row);
    });
  }

  async listSessions(options: ListSessionsOptions = {}): Promise<SessionRecord[]> {
    const limit = options.limit ?? defaultListLimit;
    const offset = options.offset ?? 0;
    checkPaging(limit, offset);
    return this.#database.run('listSessions', async () => {
      const rows = await this.#database.rows<SessionRow>(
        `SELECT ${sessionColumns} FROM sessions AS session WHERE ($1::text IS NULL OR status = $1) AND ($4::text IS NULL OR tenant = $4) AND ($5::text IS NULL OR user_id = $5)
         ORDER BY created_at DESC, ordinal DESC LIMIT $2 OFFSET $3`,
        [options.status ?? null, limit, offset, options.tenant ?? null, options.user ?? null],
      );
      return rows.map(sessionRecordOf);
    });
  }

  async closeSession(id: string, reason: SessionCloseReason, at: number): Promise<boolean> {
    return this.#database.run('closeSession', async () => {
      const result = await this.#database.query(
        "UPDATE sessions SET status = 'closed', closed_at = $1, close_reason = $2 WHERE id = $3 AND status = 'open'",
        [at, reason, id],
      );
      return (result.rowCount ?? 0) > 0;
    });
  }

  async closeIdleSessions(idleSince: number, at: number): Promise<string[]> {
    return this.#database.run('closeIdleSessions', async () => {
      const rows = await this.#database.rows<{ id: string }>(
        `UPDATE sessions SET status = 'closed', closed_at = $1, close_reason = 'idle'
         WHERE status = 'open' AND updated_at < $2 RETURNING id`,
        [at, idleSince],
      );
      return rows.map((row) => row.id);
    });
  }

  async recordTurn(turn: NewTurn): Promise<TurnRecord> {
    return this.#database.run('recordTurn', async () => {
      // Validated before any round trip: a bad id must not cost a transaction.
      const response = encodeInt32Blob(turn.responseTokenIds, 'responseTokenIds');
      const logprobs = encodeFloat64Blob(turn.logprobs, 'logprobs');
      encodeInt32Blob(turn.promptTokenIds, 'promptTokenIds');
      let inserted: { ordinal: number; index: number; root: boolean };
      const insert = () => this.#database.transaction((client) => insertTurn(client, turn, { response, logprobs }, { sequences: this.#sequences, roots: this.#roots }));
      try {
        inserted = await insert().catch(async (error: unknown) => {
          // Another process erased the root this process remembered as the prompt's base: forget the roots, store it again.
          if (!isMissingPromptBase(error)) throw error;
          this.#roots.clear();
          return insert();
        });
      } catch (error) {
        if (isDuplicateTurnId(error)) {
          throw new ClawrlError('store_error', `turn ${turn.id} is already recorded`, { cause: error });
        }
        throw error;
      }
      // Only after the commit: a rolled-back turn must never become another turn's base, nor be announced.
      this.#sequences.remember(turn.sessionId, turn.type, inserted.ordinal, turn.promptTokenIds, turn.responseTokenIds);
      if (inserted.root) this.#roots.remember(inserted.ordinal, turn.promptTokenIds);
      const recorded: TurnRecord = {
        ...turn,
        untrainableReason: turn.untrainableReason ?? null,
        supersededBy: turn.supersededBy ?? null,
        index: inserted.index,
        nextState: null,
        nextStateAt: null,
      };
      this.#events.turnRecorded(recorded);
      return recorded;
    });
  }

  async getTurn(id: string): Promise<TurnRecord | null> {
    return this.#database.run('getTurn', () => this.#loadTurn(this.#database, id));
  }

  async getTurns(ids: readonly string[]): Promise<TurnRecord[]> {
    const wanted = [...new Set(ids)];
    if (wanted.length === 0) return [];
    return this.#database.run('getTurns', async () => {
      const rows = await this.#database.rows<TurnRow>(`${selectTurnRow} WHERE turn.id = ANY($1::text[])`, [wanted]);
      const byId = new Map(rows.map((row) => [row.id, row]));
      const found = wanted.flatMap((id) => byId.get(id) ?? []);
      return Promise.all(found.map((row) => toTurnRecord(this.#database, row)));
    });
  }

  async getLastMainTurn(sessionId: string): Promise<TurnReference | null> {
    return this.#database.run('getLastMainTurn', async () => {
      const [row] = await this.#database.rows<{ id: string; reply_key: string | null; linked: boolean }>(
        `SELECT id, reply_key, next_state IS NOT NULL AS linked FROM turns
         WHERE session_id = $1 AND turn_index >= 0 AND superseded_by IS NULL ORDER BY turn_index DESC LIMIT 1`,
        [sessionId],
      );
      return row === undefined ? null : { id: row.id, replyKey: row.reply_key, linked: row.linked };
    });
  }

  async linkNextState(turnId: string, nextState: ChatMessage[], at: number): Promise<boolean> {
    return this.#database.run('linkNextState', async () => {
      // One statement: the link and the queueing commit together. Only main turns have a next
      // state, and the first link wins.
      const [row] = await this.#database.rows<{ linked: number }>(
        `WITH linked AS (
           UPDATE turns SET next_state = $1, next_state_at = $2
           WHERE id = $3 AND type = 'main' AND next_state IS NULL
           RETURNING ordinal, trainable
         ), queued AS (
           ${PostgresJudgingRecords.enqueueStatement('SELECT ordinal, $2::bigint FROM linked WHERE trainable')}
         )
         SELECT count(*)::integer AS linked FROM linked`,
        [canonicalJson(nextState), at, turnId],
      );
      return (row?.linked ?? 0) > 0;
    });
  }

  async markSuperseded(turnId: string, supersededBy: string): Promise<boolean> {
    return this.#database.run('markSuperseded', async () => {
      // One statement: the mark and the dequeue commit together. A superseded turn keeps the first
      // reason it was kept out of training (train-off stays train-off).
      const [row] = await this.#database.rows<{ marked: number }>(
        `WITH marked AS (
           UPDATE turns SET trainable = false, untrainable_reason = coalesce(untrainable_reason, 'superseded'), superseded_by = $1
           WHERE id = $2 AND type = 'main' AND next_state IS NULL
           RETURNING ordinal
         ), dequeued AS (
           DELETE FROM judge_queue WHERE turn_ordinal IN (SELECT ordinal FROM marked)
         )
         SELECT count(*)::integer AS marked FROM marked`,
        [supersededBy, turnId],
      );
      return (row?.marked ?? 0) > 0;
    });
  }

  async findByReplyKey(replyKey: string): Promise<{ sessionId: string; turnId: string } | null> {
    return this.#database.run('findByReplyKey', async () => {
      const [row] = await this.#database.rows<{ id: string; session_id: string }>(
        `SELECT turn.id, turn.session_id FROM turns AS turn JOIN sessions AS session ON session.id = turn.session_id
         WHERE turn.reply_key = $1 AND session.status = 'open' ORDER BY turn.ordinal DESC LIMIT 1`,
        [replyKey],
      );
      return row === undefined ? null : { sessionId: row.session_id, turnId: row.id };
    });
  }

  async listTurnIds(options: ListTurnIdsOptions = {}): Promise<string[]> {
    return this.#database.run('listTurnIds', () => this.#judging.listTurnIds(options));
  }

  async claimTurnsForJudging(options: ClaimTurnsOptions): Promise<JudgeClaim[]> {
    return this.#database.run('claimTurnsForJudging', () => this.#judging.claimTurns(options));
  }

  async releaseTurn(options: ReleaseTurnOptions): Promise<boolean> {
    return this.#database.run('releaseTurn', () => this.#judging.releaseTurn(options));
  }

  async recordJudgement(judgement: NewJudgement): Promise<JudgementRecord> {
    return this.#database.run('recordJudgement', () => this.#judging.recordJudgement(judgement));
  }

  async listJudgements(turnId: string): Promise<JudgementRecord[]> {
    return this.#database.run('listJudgements', () => this.#judging.listJudgements(turnId));
  }

  async recordFeedback(feedback: NewFeedback): Promise<FeedbackRecord | null> {
    return this.#database.run('recordFeedback', () => this.#judging.recordFeedback(feedback));
  }

  async getFeedback(turnId: string): Promise<FeedbackRecord | null> {
    return this.#database.run('getFeedback', () => this.#judging.getFeedback(turnId));
  }

  async listFeedback(turnId: string): Promise<FeedbackRecord[]> {
    return this.#database.run('listFeedback', () => this.#judging.listFeedback(turnId));
  }

  async recordSample(sample: NewSample): Promise<SampleRecord> {
    const recorded = await this.#database.run('recordSample', () => this.#judging.recordSample(sample));
    this.#events.sampleRecorded(recorded);
    return recorded;
  }

  async listSamples(options: ListSamplesOptions = {}): Promise<SampleRecord[]> {
    return this.#database.run('listSamples', () => this.#judging.listSamples(options));
  }

  async updateSampleStatus(input: {
    ids: string[];
    status: 'trained' | 'dropped';
    reason?: string;
    at: number;
  }): Promise<number> {
    return this.#database.run('updateSampleStatus', () => this.#judging.updateSampleStatus(input));
  }

  // Training (migration 3), delegated like judging.
  async claimSamplesForTraining(options: ClaimSamplesOptions): Promise<TrainingSample[]> {
    return this.#database.run('claimSamplesForTraining', () => this.#training.claimSamples(options));
  }
  async readySamplesByUser(now: number): Promise<ReadySamplesOfUser[]> {
    return this.#database.run('readySamplesByUser', () => this.#training.readySamplesByUser(now));
  }
  async releaseTrainingSamples(input: { workerId: string; ids?: string[] }): Promise<number> {
    return this.#database.run('releaseTrainingSamples', () => this.#training.releaseSamples(input));
  }
  async recordPolicyVersion(version: NewPolicyVersion, options: { activate: boolean }): Promise<PolicyVersionRecord> {
    return this.#database.run('recordPolicyVersion', () => this.#training.recordVersion(version, options.activate));
  }
  async commitTrainingStep(options: CommitTrainingStepOptions): Promise<TrainingStepRecord> {
    return this.#database.run('commitTrainingStep', () => this.#training.commitStep(options));
  }
  async activatePolicyVersion(version: PolicyVersion, at: number, options: { reason?: string } = {}): Promise<boolean> {
    return this.#database.run('activatePolicyVersion', () => this.#training.activate(version, at, options.reason));
  }
  async setPolicyVersionState(version: PolicyVersion, state: PolicyVersionState, options: SetPolicyVersionStateOptions): Promise<boolean> {
    return this.#database.run('setPolicyVersionState', () => this.#training.setState(version, state, options));
  }
  async listPolicyVersions(options: LineageOptions = {}): Promise<PolicyVersionRecord[]> {
    return this.#database.run('listPolicyVersions', () => this.#training.listVersions(options));
  }
  async getPolicyArtifact(version: PolicyVersion): Promise<{ kind: PolicyArtifactKind; files: Record<string, Uint8Array> } | null> {
    return this.#database.run('getPolicyArtifact', () => this.#training.artifact(version));
  }
  async listTrainingSteps(options: { limit?: number; offset?: number } = {}): Promise<TrainingStepRecord[]> {
    return this.#database.run('listTrainingSteps', () => this.#training.listSteps(options));
  }
  async trainingSummary(options: LineageOptions = {}): Promise<TrainingSummary> {
    return this.#database.run('trainingSummary', () => this.#training.summary(options));
  }
  async getSessionPolicyVersion(sessionId: string): Promise<PolicyVersion | null> {
    return this.#database.run('getSessionPolicyVersion', () => this.#training.sessionVersion(sessionId));
  }

  async counts(): Promise<StoreCounts> {
    return this.#database.run('counts', async () => {
      const rows = await this.#database.rows<{ name: string; value: number; deltas: number }>(
        'SELECT name, sum(delta) AS value, count(*)::integer AS deltas FROM record_count_deltas GROUP BY name',
      );
      // Fold the deltas into one row per counter once there are many, so this read stays small.
      // A fold re-inserts the sum of exactly the rows it deleted, so it is right however many
      // writers and other folds run at once, and a read sees it either whole or not at all.
      if (rows.reduce((total, row) => total + row.deltas, 0) > foldDeltasAbove) {
        await this.#database.rows(`
          WITH folded AS (DELETE FROM record_count_deltas RETURNING name, delta)
          INSERT INTO record_count_deltas (name, delta) SELECT name, sum(delta) FROM folded GROUP BY name`);
      }
      return toStoreCounts(rows);
    });
  }

  /** Counts the rows themselves (scans whole tables): what `counts()` must equal, for the tests. */
  async recount(): Promise<StoreCounts> {
    return this.#database.run('recount', async () => {
      const [[row], judging] = await Promise.all([
        this.#database.rows<RecountRow>(`
          SELECT
            (SELECT count(*) FROM sessions WHERE status = 'open')::integer AS open_sessions,
            (SELECT count(*) FROM sessions WHERE status = 'closed')::integer AS closed_sessions,
            count(*) FILTER (WHERE type = 'main')::integer AS main_turns,
            count(*) FILTER (WHERE type = 'side')::integer AS side_turns,
            count(*) FILTER (WHERE status = 'aborted')::integer AS aborted_turns,
            count(*) FILTER (WHERE status = 'failed')::integer AS failed_turns,
            count(*) FILTER (WHERE trainable)::integer AS trainable_turns,
            count(*) FILTER (WHERE type = 'main' AND next_state IS NOT NULL)::integer AS linked_turns
          FROM turns`),
        this.#judging.recount(),
      ]);
      return toRecountedStoreCounts(row, judging);
    });
  }

  async close(): Promise<void> {
    if (this.#database.closed) return;
    this.#sequences.clear();
    this.#roots.clear();
    try {
      await this.#database.close();
    } catch (error) {
      throw new ClawrlError('store_error', 'failed to close the Postgres record store', { cause: error });
    }
  }

  // User memory (migration 13), delegated like training.
  async remember(entry: NewMemoryEntry, maximumEntries: number): Promise<RememberResult> {
    return this.#database.run('remember', () => this.#memory.remember(entry, maximumEntries));
  }
  async listMemory(user: string): Promise<MemoryEntryRecord[]> {
    return this.#database.run('listMemory', () => this.#memory.list(user));
  }
  async editMemory(user: string, id: number, edit: MemoryEdit, at: number): Promise<EditMemoryResult> {
    return this.#database.run('editMemory', () => this.#memory.edit(user, id, edit, at));
  }
  async forgetMemory(user: string, id: number): Promise<boolean> {
    return this.#database.run('forgetMemory', () => this.#memory.forget(user, id));
  }
  async listUsers(options: { tenant?: string }): Promise<UserSummary[]> {
    return this.#database.run('listUsers', () => this.#memory.listUsers(options.tenant ?? null));
  }

  async erase(target: ErasureTarget, at: number): Promise<ErasureResult> {
    const result = await this.#database.run('erase', () => this.#database.transaction((client) => erasePostgresRows(client, target, at)));
    // A remembered base or root may be an erased turn.
    this.#sequences.clear();
    this.#roots.clear();
    // Dead row versions keep the erased bytes until vacuumed; VACUUM cannot run in a transaction.
    const storageWiped = await this.#database.query(`VACUUM ${erasedTables.join(', ')}`).then(() => true, () => false);
    return { ...result, receipt: { ...result.receipt, storageWiped } };
  }
  async listTaintedVersions(): Promise<TaintedVersion[]> {
    return this.#database.run('listTaintedVersions', () => listPostgresTaintedVersions(this.#database));
  }
  async retireVersions(versions: readonly PolicyVersion[], at: number): Promise<number> {
    return this.#database.run('retireVersions', () => retirePostgresVersions(this.#database, versions, at));
  }
  async requeueSamplesOf(versions: readonly PolicyVersion[], at: number): Promise<number> {
    return this.#database.run('requeueSamplesOf', () => requeuePostgresSamplesOf(this.#database, versions, at));
  }
  async listLineage(version: PolicyVersion): Promise<{ sampleId: string; erased: boolean }[]> {
    return this.#database.run('listLineage', () => listPostgresLineage(this.#database, version));
  }
  async #loadTurn(client: Queryable, id: string): Promise<TurnRecord | null> {
    const [row] = (await client.query<TurnRow>(`${selectTurnRow} WHERE turn.id = $1`, [id])).rows;
    return row === undefined ? null : toTurnRecord(client, row);
  }
}
