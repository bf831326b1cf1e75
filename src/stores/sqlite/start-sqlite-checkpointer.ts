/**
 * Moves WAL checkpoints off the writing thread. SQLite's automatic checkpoint runs inside the
 * commit that crosses the threshold, so every thousandth page or so one of the gateway's commits
 * also copied the WAL into the database and fsynced it (a tail of 5 ms and more on a busy disk).
 * A worker thread checkpoints on its own connection instead, and the writer keeps a higher
 * automatic threshold only as a backstop for when the worker falls behind.
 */
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

export interface SqliteCheckpointer {
  close(): Promise<void>;
}

/** WAL pages (4 KiB each) before the writer checkpoints itself; SQLite's default is 1000. */
const backstopPages = 8000;

export function startSqliteCheckpointer(
  database: Database.Database,
  options: { path: string; intervalMs?: number; workerUrl?: URL },
): SqliteCheckpointer {
  const worker = new Worker(options.workerUrl ?? new URL('./sqlite-checkpoint-worker.js', import.meta.url), {
    workerData: { path: options.path, intervalMs: options.intervalMs ?? 250 },
  });
  // It must not keep a process alive that is otherwise done, nor take it down: a failed worker
  // only means the writer's backstop checkpoints again, as SQLite does by default.
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', () => {
    if (database.open) database.pragma('wal_autocheckpoint = 1000');
  });
  database.pragma(`wal_autocheckpoint = ${backstopPages}`);
  return {
    close: async () => {
      // Waiting for an unreferenced worker is waiting on nothing that keeps the event loop alive:
      // a process with no other handle (a start-up that failed, a one-shot command) would end
      // with this promise unsettled (exit 13, every later line unprinted). Referenced again, the
      // loop stays up until the worker has closed its connection and exited.
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}
