import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { claimDataFolder, dataLockFileName } from './claim-data-folder.js';

const folders: string[] = [];
function folder(): string {
  const created = mkdtempSync(path.join(tmpdir(), 'clawrl-lock-'));
  folders.push(created);
  return created;
}
afterEach(() => {
  for (const created of folders.splice(0)) rmSync(created, { recursive: true, force: true });
});

function writeLock(data: string, owner: Record<string, unknown>): void {
  writeFileSync(path.join(data, dataLockFileName), JSON.stringify(owner));
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('claimDataFolder', () => {
  it('creates the folder and a lock naming this process, and removes it on release', () => {
    const data = path.join(folder(), 'data');
    const lock = claimDataFolder(data, 'clawrl serve');
    expect(JSON.parse(readFileSync(path.join(data, dataLockFileName), 'utf8'))).toEqual({ pid: process.pid, host: hostname(), command: 'clawrl serve' });
    lock.release();
    expect(existsSync(path.join(data, dataLockFileName))).toBe(false);
  });

  it('refuses a folder a live process holds, naming its pid, and leaves its lock alone', async () => {
    const data = folder();
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    try {
      writeLock(data, { pid: holder.pid, host: hostname(), command: 'clawrl serve' });
      const before = readFileSync(path.join(data, dataLockFileName), 'utf8');
      let caught: unknown;
      try {
        claimDataFolder(data, 'clawrl serve');
      } catch (error) {
        caught = error;
      }
      expect(ClawrlError.isInstance(caught) && caught.code === 'configuration_error').toBe(true);
      expect((caught as Error).message).toBe(
        `--data ${data} is held by a running clawrl (clawrl serve, pid ${holder.pid}). Stop it, or pass another --data (CLAWRL_DATA); if no such process runs, delete ${path.join(data, dataLockFileName)}.`,
      );
      expect(readFileSync(path.join(data, dataLockFileName), 'utf8')).toBe(before);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('takes over the lock of a process that is gone, or of a pid this process now has', () => {
    for (const pid of [deadPid(), process.pid]) {
      const data = folder();
      writeLock(data, { pid, host: hostname(), command: 'clawrl trainer' });
      const lock = claimDataFolder(data, 'clawrl serve');
      expect(JSON.parse(readFileSync(path.join(data, dataLockFileName), 'utf8'))).toMatchObject({ pid: process.pid, command: 'clawrl serve' });
      lock.release();
    }
  });

  it('counts a lock written on another host as held: its pid cannot be checked from here', () => {
    const data = folder();
    writeLock(data, { pid: deadPid(), host: 'elsewhere', command: 'clawrl trainer' });
    expect(() => claimDataFolder(data, 'clawrl trainer')).toThrow(/held by a running clawrl \(clawrl trainer, pid \d+ on elsewhere\)/);
  });

  it('does not remove a lock another process has taken since', () => {
    const data = folder();
    const lock = claimDataFolder(data, 'clawrl serve');
    writeLock(data, { pid: deadPid(), host: hostname(), command: 'clawrl serve' });
    lock.release();
    expect(existsSync(path.join(data, dataLockFileName))).toBe(true);
  });
});
