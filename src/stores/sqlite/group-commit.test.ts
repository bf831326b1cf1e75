import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGroupCommit } from './group-commit.js';

describe('createGroupCommit', () => {
  let directory: string;
  let database: Database.Database;
  let observer: Database.Database;
  /** Groups run only when the test says so. */
  let scheduled: Array<() => void>;
  const runScheduled = () => {
    const runs = scheduled;
    scheduled = [];
    for (const run of runs) run();
  };
  const count = () => (observer.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n;
  const insert = (value: string) => database.prepare('INSERT INTO items (value) VALUES (?)').run(value);

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'clawrl-group-'));
    const path = join(directory, 'group.db');
    database = new Database(path);
    database.pragma('journal_mode = WAL');
    database.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE)');
    observer = new Database(path);
    scheduled = [];
  });

  afterEach(() => {
    observer.close();
    database.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('runs the writes queued together in one transaction and settles them only after its commit', async () => {
    const group = createGroupCommit(database, { schedule: (run) => scheduled.push(run) });
    const inTransaction: boolean[] = [];
    const settled: string[] = [];
    const writes = ['a', 'b', 'c'].map((value) =>
      group.write(() => {
        inTransaction.push(database.inTransaction);
        return Number(insert(value).lastInsertRowid);
      }).then((id) => {
        // Another connection sees the row when the promise resolves: it was committed.
        settled.push(`${value}:${count()}`);
        return id;
      }),
    );
    expect(scheduled).toHaveLength(1);
    expect(group.pending).toBe(3);
    await Promise.resolve();
    expect(count()).toBe(0);
    expect(settled).toEqual([]);

    runScheduled();
    expect(await Promise.all(writes)).toEqual([1, 2, 3]);
    expect(inTransaction).toEqual([true, true, true]);
    expect(settled).toEqual(['a:3', 'b:3', 'c:3']);
    expect(group.pending).toBe(0);
  });

  it('runs writes in the order they were queued, so a later write sees an earlier one', async () => {
    const group = createGroupCommit(database, { schedule: (run) => scheduled.push(run) });
    const first = group.write(() => insert('first'));
    const second = group.write(() => (database.prepare('SELECT value FROM items').all() as { value: string }[]).map((row) => row.value));
    runScheduled();
    await first;
    expect(await second).toEqual(['first']);
  });

  it('rolls back and rejects only the write that threw; the others of the group commit', async () => {
    const group = createGroupCommit(database, { schedule: (run) => scheduled.push(run) });
    const committed: string[] = [];
    const good = group.write(() => insert('kept'), () => committed.push('kept'));
    const bad = group.write(
      () => {
        insert('rolled back');
        insert('kept'); // violates UNIQUE: this write's first insert must go too
      },
      () => committed.push('bad'),
    );
    const later = group.write(() => insert('also kept'), () => committed.push('also kept'));
    runScheduled();
    await good;
    await expect(bad).rejects.toThrow(/UNIQUE/);
    await later;
    expect((observer.prepare('SELECT value FROM items ORDER BY id').all() as { value: string }[]).map((row) => row.value)).toEqual([
      'kept',
      'also kept',
    ]);
    expect(committed).toEqual(['kept', 'also kept']);
  });

  it('rolls back a write that runs alone and throws, and runs no afterCommit for it', async () => {
    const group = createGroupCommit(database, { schedule: (run) => scheduled.push(run) });
    const committed: string[] = [];
    const alone = group.write(
      () => {
        insert('partial');
        throw new Error('failed halfway');
      },
      () => committed.push('alone'),
    );
    runScheduled();
    await expect(alone).rejects.toThrow('failed halfway');
    expect(count()).toBe(0);
    expect(committed).toEqual([]);
    const next = group.write(() => insert('partial'));
    runScheduled();
    await next;
    expect(count()).toBe(1);
  });

  it('rejects every write of a group whose transaction cannot commit, and runs no afterCommit', async () => {
    database.pragma('busy_timeout = 0');
    const group = createGroupCommit(database, { schedule: (run) => scheduled.push(run) });
    const committed: string[] = [];
    const writes = ['x', 'y'].map((value) => group.write(() => insert(value), () => committed.push(value)));
    // Another connection holds the write lock, so BEGIN IMMEDIATE fails.
    observer.exec('BEGIN IMMEDIATE');
    runScheduled();
    observer.exec('ROLLBACK');
    for (const write of writes) await expect(write).rejects.toThrow(/locked|busy/i);
    expect(committed).toEqual([]);
    expect(count()).toBe(0);

    // The next group works again.
    const next = group.write(() => insert('z'));
    runScheduled();
    await next;
    expect(count()).toBe(1);
  });

  it('commits what is queued when flushed directly (before the database closes)', async () => {
    const group = createGroupCommit(database, { schedule: (run) => scheduled.push(run) });
    const write = group.write(() => insert('flushed'));
    group.flush();
    await write;
    expect(count()).toBe(1);
    // The scheduled run finds nothing left to do.
    runScheduled();
    expect(count()).toBe(1);
  });

  it('schedules a group with setImmediate by default', async () => {
    const group = createGroupCommit(database);
    const values = await Promise.all(['p', 'q'].map((value) => group.write(() => insert(value).changes)));
    expect(values).toEqual([1, 1]);
    expect(count()).toBe(2);
  });

  describe('with retryWhenBusy, on a connection that never waits inside SQLite', () => {
    let holder: Database.Database;
    beforeEach(() => {
      database.pragma('busy_timeout = 0');
      holder = new Database(join(directory, 'group.db'));
    });
    afterEach(() => holder.close());

    for (const delayMs of [0, 1]) {
      it(`tries a group again (delay ${delayMs} ms) while another connection holds the lock, without blocking the thread`, async () => {
        const group = createGroupCommit(database, { retryWhenBusy: { delayMs, giveUpAfterMs: 5_000 } });
        holder.exec('BEGIN IMMEDIATE');
        const first = group.write(() => insert('a'));
        const second = group.write(() => insert('b'));
        // The thread is free while the lock is held: timers run, and the writes wait, queued in order.
        for (let tick = 0; tick < 5; tick += 1) await new Promise((resolve) => setTimeout(resolve, 2));
        expect(group.pending).toBe(2);
        expect(count()).toBe(0);
        holder.exec('COMMIT');
        await Promise.all([first, second]);
        expect(observer.prepare('SELECT value FROM items ORDER BY id').all()).toEqual([{ value: 'a' }, { value: 'b' }]);
      });
    }

    it('fails the writes with the busy error once the lock has been held for giveUpAfterMs', async () => {
      const group = createGroupCommit(database, { retryWhenBusy: { delayMs: 1, giveUpAfterMs: 30 } });
      holder.exec('BEGIN IMMEDIATE');
      await expect(group.write(() => insert('a'))).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
      holder.exec('ROLLBACK');
      // The next write starts a fresh wait and goes through.
      await group.write(() => insert('b'));
      expect(count()).toBe(1);
    });
  });
});
