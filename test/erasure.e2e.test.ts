/**
 * Erasure through the real server: a turn carrying a unique marker is trained on, then `clawrl data
 * delete --session` erases it — the marker is nowhere under `--data` (every file, the WAL included),
 * in Postgres, or on the NATS stream; the receipt counts what went; the version trained on it is
 * retired and, with `--on-delete retrain`, the served version's lineage holds none of its samples.
 * Retention erases what is older than `--retain-days`.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectToTestNats, testNatsUrl, uniqueTestName, type NatsTestConnection } from '../src/buses/nats/testing/nats-test-server.js';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { dropTestSchema, queryTestSchema, testPostgresUrl, uniqueTestSchema } from '../src/stores/postgres/testing/test-postgres.js';
import { cliPath, createDataDirectory, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

const adminKey = 'admin-key-erasure';
const marker = `okapi-${Date.now().toString(36)}-marker`;
let folder: string;
let model: string;
let nats: NatsTestConnection;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

function serverArguments(extra: string[]): string[] {
  return ['--engine', 'local', '--model', folder, '--judge', 'rules', '--method', 'rl', '--train-every', '1000', '--max-tokens', '8', '--admin-key', adminKey, '--api-key', 'bob=bob-key-erasure', '--api-key', 'alice=alice-key-erasure', ...extra];
}

async function call<Body>(server: ClawrlServer, route: string, init: RequestInit = {}): Promise<Body> {
  const response = await fetch(`${server.url}${route}`, { ...init, headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json', ...init.headers } });
  expect(response.status, `${init.method ?? 'GET'} ${route}`).toBe(200);
  return (await response.json()) as Body;
}

/** One turn in `sessionId` saying `text`, with thumbs-up feedback; returns its id. */
async function turnWithFeedback(server: ClawrlServer, sessionId: string, text: string): Promise<string> {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bob-key-erasure', 'x-session-id': sessionId },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: text }] }),
  });
  expect(response.status).toBe(200);
  await response.json();
  const turnId = response.headers.get('x-clawrl-turn-id') ?? '';
  await call(server, '/v1/feedback', { method: 'POST', body: JSON.stringify({ turn_id: turnId, thumbs: 'up', text: `feedback ${text}` }) });
  return turnId;
}

async function waitForReadySamples(server: ClawrlServer, count: number): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if ((await call<{ samples: { ready: number } }>(server, '/admin/status')).samples.ready >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the samples were not built in time');
}

/** Every file under `directory` whose bytes hold `text`. */
function filesHolding(directory: string, text: string): string[] {
  const needle = Buffer.from(text);
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(directory, name))
    .filter((file) => statSync(file).isFile() && readFileSync(file).includes(needle));
}

async function natsHolds(stream: string, text: string): Promise<boolean> {
  const info = await nats.manager.streams.info(stream);
  for (let sequence = info.state.first_seq; sequence <= info.state.last_seq; sequence += 1) {
    const message = await nats.manager.streams.getMessage(stream, { seq: sequence }).catch(() => null);
    if (message !== null && Buffer.from(message.data).includes(Buffer.from(text))) return true;
  }
  return false;
}

interface Receipt {
  erased: Record<string, number>;
  trainedOnErased: number[];
  affectedVersions: number[];
  storageWiped: boolean;
  eventsErased: number | null;
  action: { activated: number | null; retired: number[]; requeued: number; retrainedVersion: number | null };
}

/** Trains one version on a marked session and another, erases the marked one with the CLI, and returns the receipt. */
async function trainThenErase(server: ClawrlServer, sessionId: string): Promise<Receipt> {
  await turnWithFeedback(server, sessionId, `my name is ${marker}`);
  await turnWithFeedback(server, `kept-${Date.now().toString(36)}`, 'what is two and two');
  await waitForReadySamples(server, 2);
  const step = await call<{ kind: string; step: { policyVersion: number } }>(server, '/admin/training/step', { method: 'POST' });
  expect(step).toMatchObject({ kind: 'trained', step: { policyVersion: 1 } });
  const { stdout } = await promisify(execFile)(process.execPath, [cliPath, 'data', 'delete', '--session', sessionId, '--json', '--url', server.url, '--admin-key', adminKey]);
  return JSON.parse(stdout) as Receipt;
}

async function expectServedLineageClean(server: ClawrlServer, receipt: Receipt): Promise<void> {
  expect(receipt.erased).toMatchObject({ sessions: 1, turns: 1, feedback: 1, samples: 1 });
  expect(receipt.trainedOnErased).toEqual([1]);
  expect(receipt.action).toMatchObject({ activated: 0, retired: [1], requeued: 1, retrainedVersion: 2 });
  const policies = await call<{ data: { version: number; active: boolean; parent: number | null }[] }>(server, '/admin/policies');
  expect(policies.data.find((entry) => entry.active)).toMatchObject({ version: 2, parent: 0 });
  const lineage = await call<{ data: { erased: boolean }[] }>(server, '/admin/policies/2/lineage');
  expect(lineage.data).toEqual([{ sampleId: expect.any(String), erased: false }]);
  expect((await call<{ data: { version: number }[] }>(server, '/admin/policies/1/lineage')).data).toContainEqual({ sampleId: expect.any(String), erased: true });
  // The retired version is never served again.
  const activate = await fetch(`${server.url}/admin/policies/1/activate`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}` } });
  expect(activate.status).toBe(400);
}

beforeAll(async () => {
  folder = createTinyModelFolder();
  model = path.basename(folder);
  nats = await connectToTestNats();
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await nats?.connection.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('erasure through the server', () => {
  it('SQLite and NATS: after data delete --session the marker is in no file under --data and on no NATS message, and retraining serves a clean lineage; a tenant key cannot read another tenant\'s turn', async () => {
    const stream = uniqueTestName('clawrl_erasure');
    const server = await startClawrlServer(serverArguments(['--bus', 'nats', '--bus-url', testNatsUrl, '--bus-prefix', stream, '--on-delete', 'retrain']));
    cleanups.push(() => rmSync(server.data, { recursive: true, force: true }), () => nats.manager.streams.delete(stream).catch(() => false), () => server.stop());
    const sessionId = `session-${marker}`;
    const receipt = await trainThenErase(server, sessionId);
    expect(receipt.storageWiped).toBe(true);
    expect(receipt.eventsErased).toBeGreaterThan(0);
    await expectServedLineageClean(server, receipt);
    expect(filesHolding(server.data, marker)).toEqual([]);
    expect(await natsHolds(stream, marker)).toBe(false);
    expect(await natsHolds(stream, 'kept-')).toBe(true);
    // A tenant's key reads its own turns, never another tenant's; `clawrl status` with it shows its own counts.
    const aliceTurn = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer alice-key-erasure', 'x-session-id': 'alice-session' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
    });
    const aliceTurnId = aliceTurn.headers.get('x-clawrl-turn-id') ?? '';
    await aliceTurn.json();
    const readAs = (key: string) => fetch(`${server.url}/admin/turns/${aliceTurnId}`, { headers: { authorization: `Bearer ${key}` } });
    expect((await readAs('bob-key-erasure')).status).toBe(404);
    expect((await readAs('alice-key-erasure')).status).toBe(200);
    const status = await promisify(execFile)(process.execPath, [cliPath, 'status', '--url', server.url, '--admin-key', 'alice-key-erasure']);
    expect(status.stdout).toContain('tenant          alice');
    expect(status.stdout).toContain('sessions        1 (1 open)');
    // Still after the server stopped and closed its files.
    await server.stop();
    expect(filesHolding(server.data, marker)).toEqual([]);
  });

  it('Postgres: after data delete --session no row of the schema holds the marker', async () => {
    const schema = uniqueTestSchema();
    const storeUrl = new URL(testPostgresUrl);
    storeUrl.searchParams.set('schema', schema);
    const server = await startClawrlServer(serverArguments(['--store', 'postgres', '--store-url', storeUrl.toString(), '--on-delete', 'retrain']));
    cleanups.push(() => dropTestSchema(schema), () => rmSync(server.data, { recursive: true, force: true }), () => server.stop());
    const receipt = await trainThenErase(server, 'postgres-session');
    await expectServedLineageClean(server, receipt);
    const tables = await queryTestSchema<{ table_name: string }>(schema, 'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()');
    expect(tables.length).toBeGreaterThan(5);
    for (const { table_name: table } of tables) {
      const [row] = await queryTestSchema<{ holding: string }>(schema, `SELECT count(*) AS holding FROM "${table}" AS row WHERE row::text LIKE $1`, [`%${marker}%`]);
      expect(Number(row?.holding), table).toBe(0);
    }
  });

  it('retention: a server started with --retain-days erases the turns older than that and keeps the newer', async () => {
    const data = createDataDirectory();
    cleanups.push(() => rmSync(data, { recursive: true, force: true }));
    const first = await startClawrlServer(serverArguments([]), { data });
    const old = await turnWithFeedback(first, 'old-session', `old ${marker}`);
    const recent = await turnWithFeedback(first, 'recent-session', 'recent words');
    await first.stop();
    // The old turn (and its session) as if recorded 40 days ago.
    const database = new Database(path.join(data, 'clawrl.db'));
    const longAgo = Date.now() - 40 * 24 * 60 * 60 * 1000;
    database.prepare('UPDATE turns SET started_at = ?, ended_at = ? WHERE id = ?').run(longAgo, longAgo, old);
    database.prepare("UPDATE sessions SET updated_at = ?, created_at = ? WHERE id = 'old-session'").run(longAgo, longAgo);
    database.close();

    const second = await startClawrlServer(serverArguments(['--retain-days', '30']), { data });
    cleanups.push(() => second.stop());
    for (let attempt = 0; attempt < 100 && !second.stderr().includes('retention erased old turns'); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(second.stderr()).toContain('retention erased old turns');
    const missing = await fetch(`${second.url}/admin/turns/${old}`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(missing.status).toBe(404);
    await call(second, `/admin/turns/${recent}`);
    await second.stop();
    expect(filesHolding(data, marker)).toEqual([]);
  });
});
