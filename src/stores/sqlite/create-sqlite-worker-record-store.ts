/**
 * The SQLite `RecordStore` for the process that records turns (`clawrl serve`, `clawrl gateway`):
 * writes run in a worker thread that owns the write connection (`sqlite-store-worker.ts`), so
 * encoding a turn's token blobs, storing its message chain and the group commit no longer take
 * the HTTP thread's CPU; reads run at once on this thread's own connection, which sees a write as
 * soon as its promise has resolved (WAL: every statement reads the latest committed state).
 *
 * Durability is the seam's: a write resolves after the worker's COMMIT returned, so it is in the
 * WAL before the gateway acknowledges anything.
 */
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { ChatMessage } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';
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
import { SqliteRecordStore } from './sqlite-record-store.js';
import {
  packTurn,
  storeErrorFromWire,
  type SqliteStoreWorkerMessage,
  type SqliteStoreWorkerRequest,
  type SqliteWriteMethod,
} from './sqlite-store-worker-messages.js';

export interface SqliteWorkerRecordStoreOptions {
  /** Database file path (a worker cannot share a private in-memory database). */
  path: string;
  /** The compiled worker script; default this build's. */
  workerUrl?: URL;
}

type ForwardedWrite = Exclude<SqliteWriteMethod, 'recordTurn'>;
// Omit applied to each member of the union, so each request keeps its own fields.
type WithoutId<Member> = Member extends unknown ? Omit<Member, 'id'> : never;
type Request = WithoutId<SqliteStoreWorkerRequest>;

const busyTimeoutMilliseconds = 5_000;

function startWorker(options: SqliteWorkerRecordStoreOptions): Promise<Worker> {
  const worker = new Worker(options.workerUrl ?? new URL('./sqlite-store-worker.js', import.meta.url), { workerData: { path: options.path } });
  return new Promise((resolve, reject) => {
    const onExit = (code: number) => reject(new ClawrlError('store_error', `the SQLite store worker exited with code ${code} before opening ${options.path}`));
    const onError = (error: Error) => reject(new ClawrlError('store_error', `the SQLite store worker failed: ${error.message}`, { cause: error }));
    worker.once('exit', onExit);
    worker.once('error', onError);
    worker.once('message', (message: SqliteStoreWorkerMessage) => {
      worker.off('exit', onExit);
      worker.off('error', onError);
      if (message.kind === 'ready') resolve(worker);
      else reject(message.kind === 'failed' ? storeErrorFromWire(message.error) : new ClawrlError('store_error', 'the SQLite store worker did not start'));
    });
  });
}

export async function createSqliteWorkerRecordStore(options: SqliteWorkerRecordStoreOptions): Promise<RecordStore> {
  // The worker applies the migrations; the read connection opens only after them.
  const worker = await startWorker(options);
  let database: Database.Database | undefined;
  try {
    database = new Database(options.path);
    database.pragma(`busy_timeout = ${busyTimeoutMilliseconds}`);
    // This connection only reads; a write here would bypass the worker's group commit.
    database.pragma('query_only = ON');
    return new SqliteWorkerRecordStore(worker, new SqliteRecordStore(database));
  } catch (error) {
    database?.close();
    await worker.terminate();
    throw new ClawrlError('store_error', `cannot open the SQLite record store at ${options.path}: ${String(error)}`, { cause: error });
  }
}

class SqliteWorkerRecordStore implements RecordStore {
  readonly #worker: Worker;
  readonly #reader: RecordStore;
  readonly #pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: ClawrlError) => void }>();
  readonly #exited: Promise<void>;
  #outbox: SqliteStoreWorkerRequest[] = [];
  #nextId = 1;
  #closed = false;
  #failure: ClawrlError | null = null;

  constructor(worker: Worker, reader: RecordStore) {
    this.#worker = worker;
    this.#reader = reader;
    this.#exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (message: SqliteStoreWorkerMessage) => this.#settle(message));
    worker.on('error', (error) => this.#fail(new ClawrlError('store_error', `the SQLite store worker failed: ${error.message}`, { cause: error })));
    worker.once('exit', () => this.#fail(new ClawrlError('store_error', 'the SQLite store worker has stopped')));
    // Referenced only while a write is in flight: an idle store must not keep a finished process alive.
    worker.unref();
  }

  upsertSession(input: { id: string; tenant: string | null; at: number }): Promise<void> {
    return this.#write('upsertSession', input);
  }
  getSession(id: string): Promise<SessionRecord | null> {
    return this.#reader.getSession(id);
  }
  listSessions(options?: ListSessionsOptions): Promise<SessionRecord[]> {
    return this.#reader.listSessions(options);
  }
  closeSession(id: string, reason: SessionCloseReason, at: number): Promise<boolean> {
    return this.#write('closeSession', id, reason, at);
  }
  closeIdleSessions(idleSince: number, at: number): Promise<string[]> {
    return this.#write('closeIdleSessions', idleSince, at);
  }
  async recordTurn(turn: NewTurn): Promise<TurnRecord> {
    const index = (await this.#request({ method: 'recordTurn', turn: packTurn(turn) })) as number;
    return { ...turn, index, nextState: null, nextStateAt: null };
  }
  getTurn(id: string): Promise<TurnRecord | null> {
    return this.#reader.getTurn(id);
  }
  getLastMainTurn(sessionId: string): Promise<TurnReference | null> {
    return this.#reader.getLastMainTurn(sessionId);
  }
  linkNextState(turnId: string, nextState: ChatMessage[], at: number): Promise<boolean> {
    return this.#write('linkNextState', turnId, nextState, at);
  }
  findByReplyKey(replyKey: string): Promise<{ sessionId: string; turnId: string } | null> {
    return this.#reader.findByReplyKey(replyKey);
  }
  listTurnIds(options?: ListTurnIdsOptions): Promise<string[]> {
    return this.#reader.listTurnIds(options);
  }
  claimTurnsForJudging(options: ClaimTurnsOptions): Promise<JudgeClaim[]> {
    return this.#write('claimTurnsForJudging', options);
  }
  releaseTurn(options: ReleaseTurnOptions): Promise<boolean> {
    return this.#write('releaseTurn', options);
  }
  recordJudgement(judgement: NewJudgement): Promise<JudgementRecord> {
    return this.#write('recordJudgement', judgement);
  }
  listJudgements(turnId: string): Promise<JudgementRecord[]> {
    return this.#reader.listJudgements(turnId);
  }
  recordFeedback(feedback: NewFeedback): Promise<FeedbackRecord | null> {
    return this.#write('recordFeedback', feedback);
  }
  getFeedback(turnId: string): Promise<FeedbackRecord | null> {
    return this.#reader.getFeedback(turnId);
  }
  recordSample(sample: NewSample): Promise<SampleRecord> {
    return this.#write('recordSample', sample);
  }
  listSamples(options?: ListSamplesOptions): Promise<SampleRecord[]> {
    return this.#reader.listSamples(options);
  }
  updateSampleStatus(input: { ids: string[]; status: 'trained' | 'dropped'; reason?: string; at: number }): Promise<number> {
    return this.#write('updateSampleStatus', input);
  }
  claimSamplesForTraining(options: ClaimSamplesOptions): Promise<TrainingSample[]> {
    return this.#write('claimSamplesForTraining', options);
  }
  releaseTrainingSamples(input: { workerId: string; ids?: string[] }): Promise<number> {
    return this.#write('releaseTrainingSamples', input);
  }
  recordPolicyVersion(version: NewPolicyVersion, options: { activate: boolean }): Promise<PolicyVersionRecord> {
    return this.#write('recordPolicyVersion', version, options);
  }
  commitTrainingStep(options: CommitTrainingStepOptions): Promise<TrainingStepRecord> {
    return this.#write('commitTrainingStep', options);
  }
  activatePolicyVersion(version: PolicyVersion, at: number): Promise<boolean> {
    return this.#write('activatePolicyVersion', version, at);
  }
  listPolicyVersions(): Promise<PolicyVersionRecord[]> {
    return this.#reader.listPolicyVersions();
  }
  getPolicyArtifact(version: PolicyVersion): Promise<{ kind: PolicyArtifactKind; files: Record<string, Uint8Array> } | null> {
    return this.#reader.getPolicyArtifact(version);
  }
  listTrainingSteps(options?: { limit?: number; offset?: number }): Promise<TrainingStepRecord[]> {
    return this.#reader.listTrainingSteps(options);
  }
  trainingSummary(): Promise<TrainingSummary> {
    return this.#reader.trainingSummary();
  }
  getSessionPolicyVersion(sessionId: string): Promise<PolicyVersion | null> {
    return this.#reader.getSessionPolicyVersion(sessionId);
  }
  counts(): Promise<StoreCounts> {
    return this.#reader.counts();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // Writes already sent are ahead of the close in the worker's queue: they commit first.
    const closing = this.#request({ method: 'close' });
    this.#closed = true;
    try {
      await closing;
      await this.#exited;
    } finally {
      await this.#reader.close();
    }
  }

  #write<M extends ForwardedWrite>(method: M, ...parameters: Parameters<RecordStore[M]>): ReturnType<RecordStore[M]> {
    return this.#request({ method, arguments: parameters }) as ReturnType<RecordStore[M]>;
  }

  #request(request: Request): Promise<unknown> {
    if (this.#closed) return Promise.reject(new ClawrlError('store_error', `${request.method}: the record store is closed`));
    if (this.#failure !== null) return Promise.reject(this.#failure);
    const id = this.#nextId;
    this.#nextId += 1;
    if (this.#pending.size === 0) this.#worker.ref();
    // One message per round of the event loop: each message wakes the worker thread, and on a
    // busy machine the wake-ups, not the copying, were most of what a message cost this thread.
    // The worker would group these writes into one commit anyway.
    if (this.#outbox.length === 0) setImmediate(() => this.#sendOutbox());
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#outbox.push({ ...request, id } satisfies SqliteStoreWorkerRequest);
    });
  }

  #sendOutbox(): void {
    const requests = this.#outbox;
    this.#outbox = [];
    if (this.#failure === null) this.#worker.postMessage(requests);
  }

  #settle(message: SqliteStoreWorkerMessage): void {
    if (message.kind !== 'answers') return;
    for (const answer of message.answers) {
      const pending = this.#pending.get(answer.id);
      if (pending === undefined) continue;
      this.#pending.delete(answer.id);
      if (answer.error === undefined) pending.resolve(answer.result);
      else pending.reject(storeErrorFromWire(answer.error));
    }
    if (this.#pending.size === 0) this.#worker.unref();
  }

  #fail(error: ClawrlError): void {
    this.#failure ??= error;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }
}
