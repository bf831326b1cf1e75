/**
 * The embedded SQLite record store (better-sqlite3).
 *
 * Schema (see `sqlite-migrations.ts` for the exact DDL):
 * - `schema_migrations(version)`: applied migrations.
 * - `sessions`: one row per session, with counters of its main and side turns; the next main
 *   turn's index is `main_turns`.
 * - `message_nodes(id, parent_id, hash, body)`: a tree of messages, unique on (parent_id, hash),
 *   hash = SHA-256 of the canonical JSON body. A message list is the path from a root to a tip
 *   node, rebuilt with a recursive CTE, so a session's shared message prefix is stored once.
 * - `tool_sets(id, hash, body)`: each distinct tool list once.
 * - `turns`: one row per turn, keyed by `ordinal` (insertion order; `id` is the public turn id).
 *   `messages_tip_id` points at the request's last message node.
 *   Prompt token ids are `prompt_base_ordinal` (the session's previous turn of the same type, or for
 *   a session's first turn a recent turn of any session whose prompt was stored whole) plus
 *   `prompt_prefix_length` (how many ids of that turn's prompt+response sequence this prompt
 *   repeats) plus `prompt_suffix` (the rest, Int32 little-endian). Response ids are an Int32 blob,
 *   log-probs a Float64 blob. Together these keep a session's storage linear in its length.
 * - `turn_next_states(turn_ordinal, next_state, linked_at)`: a main turn's next state, once linked.
 *   Its own row, so linking never rewrites the turn's (SQLite writes an updated row whole).
 *
 * Times are whatever the caller passes; the store never reads the clock.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { RecordEventsOptions } from '../record-events.js';
import { applySqliteMigrations } from './sqlite-migrations.js';
import { SqliteRecordStore } from './sqlite-record-store.js';
import { startSqliteCheckpointer } from './start-sqlite-checkpointer.js';

export interface SqliteRecordStoreOptions {
  /** Database file path, or ':memory:' for a private in-memory database. */
  path: string;
  /**
   * Checkpoint the WAL from a worker thread rather than in this connection's commits; for the
   * connection that records turns on the HTTP thread. Ignored in memory.
   */
  checkpointInBackground?: boolean;
  /**
   * Never wait for another connection's lock inside SQLite, where the thread sleeps (1 ms and up):
   * writes and reads that find the database locked are tried again later instead, for up to the
   * busy timeout. For the connection on the HTTP thread, which the judge's connection (in `clawrl
   * serve`, a thread of the same process) and the trainer's contend with.
   */
  neverWait?: boolean;
  /** Where to announce committed turns and samples (`record-events.ts`); absent, nothing is announced. */
  events?: RecordEventsOptions;
}

// Long enough to ride out another process's checkpoint or migration, short enough to surface a
// stuck writer as an error rather than a hung request.
const busyTimeoutMilliseconds = 5_000;

export function createSqliteRecordStore(options: SqliteRecordStoreOptions): RecordStore {
  const inMemory = options.path === ':memory:';
  let database: Database.Database | undefined;
  try {
    if (!inMemory) mkdirSync(dirname(options.path), { recursive: true });
    database = new Database(options.path);
    // WAL with synchronous=NORMAL: a commit appends to the WAL with write(2) before returning, so
    // once a transaction has committed the operating system holds it, and killing the process
    // (even with SIGKILL) cannot lose it. Only the fsync per commit is skipped, which matters for a
    // power loss or kernel crash, where the last transactions may roll back but the file stays
    // consistent. That is the durability the RecordStore promises, at a fraction of FULL's cost.
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma(`busy_timeout = ${busyTimeoutMilliseconds}`);
    database.pragma('foreign_keys = ON');
    // Deleted and overwritten content is zeroed in its page at once, on every connection that writes
    // (the judge's, the trainer's): a row updated before an erasure (a sample's status) must leave no
    // older copy of its text in the page's free space for the erasure to miss.
    database.pragma('secure_delete = ON');
    applySqliteMigrations(database);
    const checkpointer = options.checkpointInBackground === true && !inMemory ? startSqliteCheckpointer(database, { path: options.path }) : null;
    const events = options.events === undefined ? {} : { events: options.events };
    if (options.neverWait !== true) return new SqliteRecordStore(database, { afterClose: () => checkpointer?.close(), ...events });
    // After the migrations, which may wait for another process's lock like any open.
    database.pragma('busy_timeout = 0');
    return new SqliteRecordStore(database, {
      afterClose: () => checkpointer?.close(),
      retryWhenBusy: { delayMs: 0, giveUpAfterMs: busyTimeoutMilliseconds },
      ...events,
    });
  } catch (error) {
    database?.close();
    if (ClawrlError.isInstance(error)) throw error;
    throw new ClawrlError('store_error', `cannot open the SQLite record store at ${options.path}: ${String(error)}`, {
      cause: error,
    });
  }
}
