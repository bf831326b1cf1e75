import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startSqliteCheckpointer } from './start-sqlite-checkpointer.js';

// The worker runs compiled code (`npm run build` first, as for the other worker tests).
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'stores', 'sqlite', 'sqlite-checkpoint-worker.js'), import.meta.url);

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('startSqliteCheckpointer', () => {
  it('copies committed WAL pages into the database file from its own thread, and stops on close', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'clawrl-checkpoint-'));
    directories.push(directory);
    const file = path.join(directory, 'test.db');
    const database = new Database(file);
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.exec('CREATE TABLE blobs (body BLOB)');
    const checkpointer = startSqliteCheckpointer(database, { path: file, intervalMs: 20, workerUrl });
    // The writer's own automatic checkpoint is only a backstop now, far above this test's writes.
    expect(database.pragma('wal_autocheckpoint', { simple: true })).toBe(8000);
    const insert = database.prepare('INSERT INTO blobs (body) VALUES (?)');
    database.transaction(() => {
      for (let index = 0; index < 256; index += 1) insert.run(Buffer.alloc(4096, index));
    })();
    const sizeBefore = statSync(file).size;
    const deadline = Date.now() + 10_000;
    while (statSync(file).size < 1024 * 1024 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sizeBefore).toBeLessThan(1024 * 1024);
    expect(statSync(file).size).toBeGreaterThanOrEqual(1024 * 1024);
    await checkpointer.close();
    expect(database.prepare('SELECT COUNT(*) AS count FROM blobs').get()).toEqual({ count: 256 });
    database.close();
  });

  it('closes in a process that has nothing else to wait for', () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'clawrl-checkpoint-'));
    directories.push(directory);
    // As a start-up that failed after opening the store: the close is all that is left, and the
    // worker, unreferenced while it runs, must keep the process up until it has exited.
    const store = new URL(path.join('..', '..', '..', 'dist', 'stores', 'sqlite', 'create-sqlite-record-store.js'), import.meta.url);
    const script = [
      `const { createSqliteRecordStore } = await import(${JSON.stringify(store.href)});`,
      `const store = createSqliteRecordStore({ path: ${JSON.stringify(path.join(directory, 'test.db'))}, checkpointInBackground: true });`,
      'await store.close();',
      "process.stdout.write('closed');",
    ].join('\n');
    const result = spawnSync(process.execPath, ['--input-type=module', '--eval', script], { encoding: 'utf8', timeout: 30_000 });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('closed');
    expect(result.status).toBe(0);
  });
});
