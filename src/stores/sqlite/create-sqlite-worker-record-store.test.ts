import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { NewTurn } from '../../spec/records.js';
import { runRecordStoreContract } from '../record-store.contract.js';
import { createSqliteRecordStore } from './create-sqlite-record-store.js';
import { createSqliteWorkerRecordStore } from './create-sqlite-worker-record-store.js';

// The worker runs compiled code (`npm run build` first, as for the other worker tests).
const workerUrl = new URL(join('..', '..', '..', 'dist', 'stores', 'sqlite', 'sqlite-store-worker.js'), import.meta.url);

let contractDirectory: string | undefined;
runRecordStoreContract({
  name: 'sqlite file, writes in a worker thread',
  createStore: async () => {
    contractDirectory = mkdtempSync(join(tmpdir(), 'clawrl-worker-store-'));
    return createSqliteWorkerRecordStore({ path: join(contractDirectory, 'nested', 'records.db'), workerUrl });
  },
  cleanup: async () => {
    if (contractDirectory !== undefined) rmSync(contractDirectory, { recursive: true, force: true });
  },
});

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function temporaryPath(): string {
  const directory = mkdtempSync(join(tmpdir(), 'clawrl-worker-store-'));
  directories.push(directory);
  return join(directory, 'records.db');
}

const turn = (id: string, promptTokenIds: number[]): NewTurn => ({
  id,
  sessionId: 's1',
  type: 'main',
  status: 'completed',
  trainable: true,
  tenant: null,
  model: 'm',
  policyVersion: 0,
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
  promptTokenIds,
  responseTokenIds: [7, 8],
  logprobs: [-0, Number.NEGATIVE_INFINITY],
  response: { role: 'assistant', content: 'hello' },
  finishReason: 'stop',
  timings: { startedAt: 1, firstTokenAt: 2, endedAt: 3 },
  error: null,
  replyKey: null,
});

describe('createSqliteWorkerRecordStore', () => {
  it('commits writes that another connection reads back exactly, and rejects bad token ids by name', async () => {
    const path = temporaryPath();
    const store = await createSqliteWorkerRecordStore({ path, workerUrl });
    await store.upsertSession({ id: 's1', tenant: null, at: 1 });
    const ids = Array.from({ length: 11_000 }, (_, position) => (position * 7919) % 150_000);
    const [first, second] = await Promise.all([store.recordTurn(turn('t1', ids)), store.recordTurn(turn('t2', [...ids, 5]))]);
    expect([first.index, second.index]).toEqual([0, 1]);
    const rejected: unknown = await store.recordTurn(turn('t3', [1.5])).catch((error: unknown) => error);
    expect(ClawrlError.isInstance(rejected) && rejected.code === 'store_error' && rejected.message).toContain('promptTokenIds[0]');
    await store.close();
    const other = createSqliteRecordStore({ path });
    const stored = await other.getTurn('t2');
    expect(stored?.promptTokenIds).toEqual([...ids, 5]);
    expect(Object.is(stored?.logprobs[0], -0)).toBe(true);
    expect(await other.getTurn('t3')).toBeNull();
    await other.close();
  });

  it('commits writes sent before close, and refuses writes after it', async () => {
    const path = temporaryPath();
    const store = await createSqliteWorkerRecordStore({ path, workerUrl });
    const written = store.upsertSession({ id: 'late', tenant: 'alice', at: 5 });
    await store.close();
    await written;
    const rejected: unknown = await store.upsertSession({ id: 'after', tenant: null, at: 6 }).catch((error: unknown) => error);
    expect(ClawrlError.isInstance(rejected) && rejected.code).toBe('store_error');
    const other = createSqliteRecordStore({ path });
    expect(await other.getSession('late')).toMatchObject({ tenant: 'alice' });
    await other.close();
  });
});
