/**
 * The `--data` folder's lock: `clawrl.lock`, naming the process (pid, host, command) that owns the
 * folder's files (the SQLite store of `serve`, the trainer's checkpoints). A second `serve` or
 * `trainer` on a folder a running clawrl holds refuses in one line naming the holder, before it
 * opens anything there. A lock whose process is gone (kill -9, a crash) is taken over: the pid is
 * checked on this machine; a lock written on another host (a shared folder) cannot be checked and
 * counts as held. Commands that only read or append through the store (`status`, `samples export`,
 * `rejudge`, `gateway`, `judge`) take no lock: SQLite and Postgres serialize their writes.
 */
import { hostname } from 'node:os';
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import path from 'node:path';
import { ClawrlError } from '../../spec/clawrl-error.js';

export const dataLockFileName = 'clawrl.lock';

interface LockOwner {
  pid: number;
  host: string;
  command: string;
}

export interface DataFolderLock {
  /** Removes the lock file, if it still names this process. */
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(file: string): LockOwner | null {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? { pid: owner.pid, host: owner.host, command: String(owner.command ?? 'clawrl') } : null;
  } catch {
    // Missing, or half-written by a process that died while writing it: nobody holds it.
    return null;
  }
}

/** Creates the lock file only if none exists; false when one does. */
function createLock(file: string, owner: LockOwner): boolean {
  let descriptor: number;
  try {
    descriptor = openSync(file, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  writeSync(descriptor, `${JSON.stringify(owner)}\n`);
  closeSync(descriptor);
  return true;
}

/**
 * Takes `--data`'s lock for `command`, creating the folder if it is missing; `configuration_error`
 * when a live process holds it. Call it after the cheap checks and before opening anything there.
 */
export function claimDataFolder(data: string, command: string): DataFolderLock {
  const file = path.join(data, dataLockFileName);
  const self: LockOwner = { pid: process.pid, host: hostname(), command };
  try {
    mkdirSync(data, { recursive: true });
  } catch {
    // The store names a folder it cannot use in its own line (open-record-store.ts); the lock then cannot be taken either.
    return { release() {} };
  }
  for (let attempt = 0; attempt < 2; attempt += 1) {
    if (createLock(file, self)) {
      return {
        release() {
          if (readOwner(file)?.pid === self.pid) rmSync(file, { force: true });
        },
      };
    }
    const owner = readOwner(file);
    // A lock naming this very pid on this host was left by an earlier process the pid was reused from.
    if (owner !== null && (owner.host !== self.host || (owner.pid !== self.pid && isAlive(owner.pid)))) {
      const where = owner.host === self.host ? `pid ${owner.pid}` : `pid ${owner.pid} on ${owner.host}`;
      throw new ClawrlError(
        'configuration_error',
        `--data ${data} is held by a running clawrl (${owner.command}, ${where}). Stop it, or pass another --data (CLAWRL_DATA); if no such process runs, delete ${file}.`,
        { param: 'data' },
      );
    }
    // The holder is gone: its lock is stale.
    rmSync(file, { force: true });
  }
  throw new ClawrlError('configuration_error', `--data ${data}: another clawrl took ${file} while this one started; start one at a time.`, { param: 'data' });
}
