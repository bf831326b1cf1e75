/**
 * Group commit for the SQLite store: writes queued while the event loop handles one batch of I/O
 * run together in one IMMEDIATE transaction, each inside its own savepoint, and their promises
 * settle only after that transaction has committed.
 *
 * Why: a commit costs a lock, a WAL append and its bookkeeping whatever it holds, and under load
 * the gateway issues several small writes per request (session touch, next-state link, turn) from
 * many requests in the same loop iteration. One commit for all of them costs little more than one.
 *
 * Guarantees:
 * - Durability is unchanged: a write's promise resolves only after COMMIT returned, so the write
 *   is in the WAL and survives `kill -9` (see `create-sqlite-record-store.ts`).
 * - Errors are passed on as thrown; the store maps them to `store_error`s.
 * - Isolation between writers: a write that throws rolls back to its savepoint and rejects alone;
 *   the others in the group commit. A failed COMMIT rejects every write of the group.
 * - Order: writes run in the order they were queued, so a later write sees an earlier one.
 * - `afterCommit` runs only for writes that committed (caches must never learn a rolled-back row).
 */
import type Database from 'better-sqlite3';

interface PendingWrite {
  /** Runs inside the group's transaction, in a savepoint; records what it threw. */
  run(): void;
  /** Runs as the transaction's only write; throws what it threw, so the transaction rolls back. */
  runAlone(): void;
  settle(committed: boolean, commitError: unknown): void;
}

export interface GroupCommit {
  /**
   * Queues `work` for the next group transaction. `work` runs synchronously inside it (a
   * better-sqlite3 transaction function called there becomes a savepoint); the promise resolves
   * with its result after the commit, or rejects with what it threw.
   */
  write<T>(work: () => T, afterCommit?: (result: T) => void): Promise<T>;
  /** Runs the queued writes now (before closing the database). */
  flush(): void;
  /** Writes queued and not yet committed. */
  readonly pending: number;
}

export interface GroupCommitOptions {
  /** When to run a group; default `setImmediate`, after the loop's pending I/O callbacks. */
  schedule?: (run: () => void) => void;
}

export function createGroupCommit(database: Database.Database, options: GroupCommitOptions = {}): GroupCommit {
  const schedule = options.schedule ?? ((run: () => void) => void setImmediate(run));
  let queue: PendingWrite[] = [];
  let scheduled = false;

  const runGroup = database.transaction((writes: PendingWrite[]) => {
    for (const write of writes) write.run();
  });
  // Called inside the group's transaction, a transaction function opens a savepoint.
  const inSavepoint = database.transaction((work: () => unknown) => work());
  // A write alone needs no savepoint: if it throws, the whole transaction rolls back, and that is
  // only its own. It is the common case at low concurrency, where the two saved statements count.
  const runAlone = database.transaction((write: PendingWrite) => write.runAlone());

  function flush(): void {
    scheduled = false;
    const writes = queue;
    queue = [];
    if (writes.length === 0) return;
    const [only] = writes;
    try {
      if (writes.length === 1 && only !== undefined) runAlone.immediate(only);
      else runGroup.immediate(writes);
    } catch (error) {
      // The write alone threw, or BEGIN or COMMIT failed (a grouped write's own errors are caught
      // in `run`): nothing committed.
      for (const write of writes) write.settle(false, error);
      return;
    }
    for (const write of writes) write.settle(true, undefined);
  }

  return {
    write<T>(work: () => T, afterCommit?: (result: T) => void): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
        queue.push({
          run() {
            try {
              outcome = { ok: true, value: inSavepoint(work) as T };
            } catch (error) {
              outcome = { ok: false, error };
            }
          },
          runAlone() {
            outcome = { ok: true, value: work() };
          },
          settle(committed, commitError) {
            if (!committed) return reject(commitError);
            if (outcome === undefined) return reject(new Error('the write never ran'));
            if (!outcome.ok) return reject(outcome.error);
            try {
              afterCommit?.(outcome.value);
            } catch (error) {
              return reject(error);
            }
            resolve(outcome.value);
          },
        });
        if (!scheduled) {
          scheduled = true;
          schedule(flush);
        }
      });
    },
    flush,
    get pending() {
      return queue.length;
    },
  };
}
