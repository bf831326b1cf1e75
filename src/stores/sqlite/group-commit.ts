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
 * - With `retryWhenBusy`, a group that finds another connection (the judge's, another process's)
 *   holding the write lock is put back and tried again later, so the calling thread never sleeps
 *   inside SQLite's busy handler: on the HTTP thread such a sleep (1 ms and up) stalls every request
 *   in flight, and under `clawrl serve`'s judge load one commit in seven met the lock.
 */
import type Database from 'better-sqlite3';

interface PendingWrite {
  /** Whether `run` or `runAlone` has begun: a group none of whose writes has is safe to try again. */
  readonly started: boolean;
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
  /**
   * For a connection whose busy timeout is 0: when BEGIN finds the database locked, the group is
   * tried again on the next loop iteration (`delayMs` 0) or after `delayMs`; its writes fail with
   * the busy error once the lock has been held against it for `giveUpAfterMs`, as a busy timeout
   * would have failed them.
   */
  retryWhenBusy?: { delayMs: number; giveUpAfterMs: number };
}

/** SQLITE_BUSY and its extended codes, as better-sqlite3 reports them. */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

export function createGroupCommit(database: Database.Database, options: GroupCommitOptions = {}): GroupCommit {
  const schedule = options.schedule ?? ((run: () => void) => void setImmediate(run));
  let queue: PendingWrite[] = [];
  let scheduled = false;
  const retry = options.retryWhenBusy;
  /** When BEGIN first found the database locked, while it still does. */
  let busySince: number | undefined;

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
      if (retry !== undefined && isSqliteBusy(error) && writes.every((write) => !write.started)) {
        busySince ??= performance.now();
        if (performance.now() - busySince < retry.giveUpAfterMs) {
          // Nothing ran: BEGIN found another connection's lock. Try again, in order, first.
          queue = writes.concat(queue);
          if (!scheduled) {
            scheduled = true;
            if (retry.delayMs === 0) setImmediate(flush);
            else setTimeout(flush, retry.delayMs);
          }
          return;
        }
      }
      busySince = undefined;
      // The write alone threw, or BEGIN or COMMIT failed (a grouped write's own errors are caught
      // in `run`): nothing committed.
      for (const write of writes) write.settle(false, error);
      return;
    }
    busySince = undefined;
    for (const write of writes) write.settle(true, undefined);
  }

  return {
    write<T>(work: () => T, afterCommit?: (result: T) => void): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
        let started = false;
        queue.push({
          get started() {
            return started;
          },
          run() {
            started = true;
            try {
              outcome = { ok: true, value: inSavepoint(work) as T };
            } catch (error) {
              outcome = { ok: false, error };
            }
          },
          runAlone() {
            started = true;
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
