/**
 * Worker thread that owns the SQLite write connection of `createSqliteWorkerRecordStore`: it runs
 * the store's writes (encoding token blobs, storing message chains, the group commit) so the HTTP
 * thread does not. Requests are not awaited one by one: the writes that arrive together queue
 * together and share one commit, as they would on the calling thread. An answer is posted only
 * after its commit, so an acknowledged write is in the WAL and survives `kill -9`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { RecordStore } from '../../spec/record-store.js';
import { createSqliteRecordStore } from './create-sqlite-record-store.js';
import {
  sqliteWriteMethods,
  unpackTurn,
  wireStoreErrorOf,
  type SqliteStoreWorkerAnswer,
  type SqliteStoreWorkerMessage,
  type SqliteStoreWorkerRequest,
} from './sqlite-store-worker-messages.js';

const { path } = workerData as { path: string };
const port = parentPort;

function post(message: SqliteStoreWorkerMessage): void {
  port?.postMessage(message);
}

function call(store: RecordStore, request: SqliteStoreWorkerRequest): Promise<unknown> {
  if (request.method === 'recordTurn') {
    // The caller already holds the turn; only its index comes back.
    return store.recordTurn(unpackTurn(request.turn)).then((turn) => turn.index);
  }
  if (request.method === 'close') return store.close();
  if (!sqliteWriteMethods.includes(request.method)) return Promise.reject(new Error(`unknown store method ${String(request.method)}`));
  const method = store[request.method] as (...parameters: unknown[]) => Promise<unknown>;
  return method.apply(store, request.arguments);
}

function open(): RecordStore | null {
  try {
    const opened = createSqliteRecordStore({ path, checkpointInBackground: true });
    post({ kind: 'ready' });
    return opened;
  } catch (error) {
    post({ kind: 'failed', error: wireStoreErrorOf(error) });
    return null;
  }
}

let answers: SqliteStoreWorkerAnswer[] = [];

/** Answers go back in batches, as requests come: the writes of one commit settle together. */
function answer(reply: SqliteStoreWorkerAnswer): void {
  if (answers.length === 0) {
    setImmediate(() => {
      post({ kind: 'answers', answers });
      answers = [];
    });
  }
  answers.push(reply);
}

const store = open();
if (store === null) port?.close();
else {
  port?.on('message', (requests: SqliteStoreWorkerRequest[]) => {
    for (const request of requests) {
      call(store, request).then(
        (result) => {
          answer({ id: request.id, result });
          // After the close's answer has gone out, the port may close.
          if (request.method === 'close') setImmediate(() => port.close());
        },
        (error: unknown) => answer({ id: request.id, error: wireStoreErrorOf(error) }),
      );
    }
  });
}
