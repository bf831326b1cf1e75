/**
 * kill -9 loses no acknowledged turn: a real child process writes turns through the built SQLite
 * store, three at a time so they are group-committed together, is killed with SIGKILL mid-stream,
 * and every turn it acknowledged must read back intact.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewTurn } from '../src/spec/records.js';
import { createSqliteRecordStore } from '../src/stores/sqlite/create-sqlite-record-store.js';

const builtStore = fileURLToPath(new URL('../dist/stores/sqlite/create-sqlite-record-store.js', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/store-crash/record-turns.mjs', import.meta.url));

/** Runs the writer until it has acknowledged `acknowledgements` turns, then SIGKILLs it. */
async function recordUntilKilled(databasePath: string, runName: string, acknowledgements: number): Promise<NewTurn[]> {
  const child = spawn(process.execPath, [childScript, databasePath, runName], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acknowledged: NewTurn[] = [];
  let pending = '';
  let errors = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    errors += chunk;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    // A line without its newline may have been cut by the kill: it was not fully acknowledged.
    pending = lines.pop() ?? '';
    for (const line of lines) acknowledged.push(JSON.parse(line) as NewTurn);
    if (acknowledged.length >= acknowledgements && !child.killed) child.kill('SIGKILL');
  });
  // 'close' rather than 'exit': it waits until the pipes are drained, so every line printed before
  // the kill is counted.
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.on('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  });
  expect({ code, signal, errors }).toEqual({ code: null, signal: 'SIGKILL', errors: '' });
  return acknowledged;
}

describe('SQLite record store under kill -9', () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'clawrl-crash-'));
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('keeps every acknowledged turn intact across two killed writers', async () => {
    if (!existsSync(builtStore)) {
      throw new Error(
        `the crash test runs the compiled store, and ${builtStore} is missing: run \`npm run build\` first`,
      );
    }
    const databasePath = join(directory, 'records.db');
    const first = await recordUntilKilled(databasePath, 'first', 150);
    // The second writer starts on the file the first one left behind mid-transaction.
    const second = await recordUntilKilled(databasePath, 'second', 150);

    const store = createSqliteRecordStore({ path: databasePath });
    try {
      for (const turn of [...first, ...second]) {
        const stored = await store.getTurn(turn.id);
        expect(stored, `turn ${turn.id}`).toEqual({
          ...turn,
          index: expect.any(Number) as number,
          nextState: null,
          nextStateAt: null,
          untrainableReason: null,
          supersededBy: null,
        });
      }
      for (const runName of ['first', 'second']) {
        const sessions = (await store.listSessions({ limit: 1_000 })).filter((session) =>
          session.id.startsWith(`${runName}-`),
        );
        expect(sessions.length).toBeGreaterThan(0);
        for (const session of sessions) {
          const indexes = await Promise.all(session.turnIds.map(async (id) => (await store.getTurn(id))?.index));
          expect(indexes).toEqual(session.turnIds.map((_, position) => position));
        }
      }
      const counts = await store.counts();
      // Each process writes three turns at a time (so they share group commits): at most those
      // three may have committed without being printed before the kill.
      expect(counts.turns.main + counts.turns.side - first.length - second.length).toBeGreaterThanOrEqual(0);
      expect(counts.turns.main + counts.turns.side - first.length - second.length).toBeLessThanOrEqual(2 * 3);
    } finally {
      await store.close();
    }
  });
});
