/**
 * What the HTTP thread and the SQLite store worker (`sqlite-store-worker.ts`) send each other.
 * Only writes cross: reads run on the caller's own read connection, which sees a write as soon as
 * the worker has committed it.
 */
import { ClawrlError, type ClawrlErrorCode } from '../../spec/clawrl-error.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { NewTurn } from '../../spec/records.js';

/** The store methods that write; each runs in the worker, through its group commit. */
export const sqliteWriteMethods = [
  'upsertSession',
  'closeSession',
  'closeIdleSessions',
  'recordTurn',
  'linkNextState',
  'claimTurnsForJudging',
  'releaseTurn',
  'recordJudgement',
  'recordFeedback',
  'recordSample',
  'updateSampleStatus',
  'claimSamplesForTraining',
  'releaseTrainingSamples',
  'recordPolicyVersion',
  'commitTrainingStep',
  'activatePolicyVersion',
] as const satisfies ReadonlyArray<keyof RecordStore>;

export type SqliteWriteMethod = (typeof sqliteWriteMethods)[number];

/**
 * A turn as it crosses to the worker: token ids as an `Int32Array`, which structured cloning
 * copies as one block (an 11k-id prompt: a third of the cost of cloning the plain array). Ids
 * that are not 32-bit integers stay a plain array, so the store rejects them by name as before.
 */
export interface PackedTurn extends Omit<NewTurn, 'promptTokenIds' | 'responseTokenIds'> {
  promptTokenIds: Int32Array | number[];
  responseTokenIds: Int32Array | number[];
}

export type SqliteStoreWorkerRequest =
  | { id: number; method: 'recordTurn'; turn: PackedTurn }
  | { id: number; method: Exclude<SqliteWriteMethod, 'recordTurn'>; arguments: unknown[] }
  | { id: number; method: 'close' };

export interface WireStoreError {
  code: ClawrlErrorCode;
  message: string;
  param: string | undefined;
  retryable: boolean;
}

/** One answer per request, by id: its result, or its error. */
export type SqliteStoreWorkerAnswer = { id: number; result: unknown; error?: undefined } | { id: number; error: WireStoreError };

/**
 * `ready` after migrations (or `failed` to open); then answers in batches. Requests go the other
 * way as arrays, also batched.
 */
export type SqliteStoreWorkerMessage = { kind: 'ready' } | { kind: 'failed'; error: WireStoreError } | { kind: 'answers'; answers: SqliteStoreWorkerAnswer[] };

function packedIds(ids: number[]): Int32Array | number[] {
  const packed = Int32Array.from(ids);
  for (let position = 0; position < ids.length; position += 1) if (packed[position] !== ids[position]) return ids;
  return packed;
}

export function packTurn(turn: NewTurn): PackedTurn {
  return { ...turn, promptTokenIds: packedIds(turn.promptTokenIds), responseTokenIds: packedIds(turn.responseTokenIds) };
}

function plainIds(ids: Int32Array | number[]): number[] {
  if (Array.isArray(ids)) return ids;
  // An indexed copy: `Array.from` goes through the iterator protocol, several times slower.
  const plain = new Array<number>(ids.length);
  for (let position = 0; position < ids.length; position += 1) plain[position] = ids[position]!;
  return plain;
}

export function unpackTurn(turn: PackedTurn): NewTurn {
  return { ...turn, promptTokenIds: plainIds(turn.promptTokenIds), responseTokenIds: plainIds(turn.responseTokenIds) };
}

export function wireStoreErrorOf(error: unknown): WireStoreError {
  if (ClawrlError.isInstance(error)) return { code: error.code, message: error.message, param: error.param, retryable: error.retryable };
  return { code: 'store_error', message: String(error), param: undefined, retryable: false };
}

export function storeErrorFromWire(error: WireStoreError): ClawrlError {
  return new ClawrlError(error.code, error.message, { ...(error.param === undefined ? {} : { param: error.param }), retryable: error.retryable });
}
