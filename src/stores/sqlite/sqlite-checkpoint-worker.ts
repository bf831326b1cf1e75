/**
 * Worker thread that checkpoints a SQLite WAL database on its own connection, so the copying of
 * WAL pages into the database file and its fsync happen off the thread that commits the writes
 * (`start-sqlite-checkpointer.ts`). PASSIVE: it never waits for readers or blocks writers.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const database = new Database(path);
database.pragma('busy_timeout = 1000');
// Only the writing connection's backstop should ever checkpoint automatically, not this one.
database.pragma('wal_autocheckpoint = 0');

const timer = setInterval(() => {
  try {
    database.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // A busy database or a closing one: the next round or the writer's backstop catches up.
  }
}, intervalMs);

parentPort?.once('message', () => {
  clearInterval(timer);
  database.close();
  parentPort?.close();
});
