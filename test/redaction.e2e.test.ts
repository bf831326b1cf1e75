/**
 * Redaction before anything is kept, end to end on the built server: a session whose messages,
 * next state and feedback carry a provider-shaped key, an email and a unique marker phrase. The
 * client gets its replies; the server keeps the marker (so the scans below can see kept text) but
 * the key and the email appear in no file under `--data` (SQLite, its WAL, checkpoints), in no
 * Postgres row, and in no message on the NATS streams, after the turn was judged and trained on.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { connectToTestNats, testNatsUrl, uniqueTestName } from '../src/buses/nats/testing/nats-test-server.js';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { checkTestPostgresReachable, dropTestSchema, queryTestSchema, testPostgresUrl, uniqueTestSchema } from '../src/stores/postgres/testing/test-postgres.js';
import { startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

const run = randomBytes(6).toString('hex');
const key = `sk-proj-${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x')}Q7`;
const email = `dana.${run}@acme-corp.com`;
const marker = `purple giraffe ${run}`;
const forbidden = [key, email];

let folder: string;
const servers: ClawrlServer[] = [];

beforeAll(() => {
  folder = createTinyModelFolder();
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  for (const server of servers) rmSync(server.data, { recursive: true, force: true });
  rmSync(folder, { recursive: true, force: true });
});

interface Status {
  judged: number;
  trainSteps: number;
}

async function json<Body>(url: string, init?: RequestInit): Promise<Body> {
  const response = await fetch(url, init);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Body;
}

async function chat(url: string, session: string, messages: Array<{ role: string; content: string }>, model = folder): Promise<{ turnId: string; content: string }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-id': session },
    body: JSON.stringify({ model, messages, max_tokens: 8 }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: Array<{ message: { content: string | null } }> };
  return { turnId: response.headers.get('x-clawrl-turn-id') ?? '', content: body.choices[0]?.message.content ?? '' };
}

/** Two turns (the second links the first's next state), feedback on the first, then judged and trained. */
async function converse(server: ClawrlServer): Promise<string> {
  const session = `redaction-${run}-${servers.length}`;
  const opening = { role: 'user', content: `Deploy with OPENAI_API_KEY=${key} and mail ${email} when done. ${marker}` };
  const first = await chat(server.url, session, [opening]);
  await chat(server.url, session, [opening, { role: 'assistant', content: first.content }, { role: 'user', content: `It failed. The key ${key} is right; write to ${email}.` }]);
  await json(`${server.url}/v1/feedback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ turn_id: first.turnId, thumbs: 'up', text: `thanks, copy ${email}` }),
  });
  for (let attempt = 0; attempt < 240; attempt += 1) {
    const status = await json<Status>(`${server.url}/admin/status`);
    if (status.judged >= 1 && status.trainSteps >= 1) return first.turnId;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the turn was not judged and trained on in time:\n${server.stderr()}`);
}

/** Every file under the folder, byte for byte, with what it holds of each needle. */
function scanFolder(root: string, needles: string[]): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  const visit = (directory: string) => {
    for (const name of readdirSync(directory)) {
      const file = path.join(directory, name);
      if (statSync(file).isDirectory()) visit(file);
      else {
        const bytes = readFileSync(file);
        const hits = needles.filter((needle) => bytes.includes(Buffer.from(needle, 'utf8')));
        if (hits.length > 0) found[path.relative(root, file)] = hits;
      }
    }
  };
  visit(root);
  return found;
}

async function checkKeptTurn(server: ClawrlServer, turnId: string): Promise<void> {
  const turn = await json<{ messages: Array<{ content: string }>; nextState: Array<{ content: string }>; promptTokenIds: number[] }>(`${server.url}/admin/turns/${turnId}`);
  expect(turn.messages[0]?.content).toBe(`Deploy with OPENAI_API_KEY=[REDACTED:api-key] and mail [REDACTED:email] when done. ${marker}`);
  expect(turn.nextState[0]?.content).toBe('It failed. The key [REDACTED:api-key] is right; write to [REDACTED:email].');
  // The local engine's tokenizer re-renders the redacted prompt, so the turn keeps ids that spell it.
  expect(turn.promptTokenIds.length).toBeGreaterThan(0);
}

describe('redaction before anything is kept', () => {
  it('keeps neither the key nor the email in any file under --data (SQLite, WAL, checkpoints)', async () => {
    const server = await startClawrlServer(['--engine', 'local', '--model', folder, '--judge', 'rules', '--method', 'rl', '--train-every', '1', '--max-tokens', '8']);
    servers.push(server);
    const turnId = await converse(server);
    await checkKeptTurn(server, turnId);
    // While running (the WAL holds the newest writes) and after a clean stop.
    const running = scanFolder(server.data, [...forbidden, marker]);
    expect(Object.values(running).flat()).toContain(marker);
    expect(Object.entries(running).filter(([, hits]) => hits.some((hit) => forbidden.includes(hit)))).toEqual([]);
    expect(readdirSync(server.data).some((name) => name.endsWith('-wal'))).toBe(true);
    await server.stop();
    expect(Object.entries(scanFolder(server.data, forbidden))).toEqual([]);
  });

  it('keeps neither in Postgres nor on the NATS streams', async () => {
    await checkTestPostgresReachable();
    const schema = uniqueTestSchema();
    const busPrefix = uniqueTestName('clawrl_redaction');
    const storeUrl = new URL(testPostgresUrl);
    storeUrl.searchParams.set('schema', schema);
    const nats = await connectToTestNats();
    try {
      const server = await startClawrlServer([
        '--engine', 'local', '--model', folder, '--judge', 'rules', '--method', 'rl', '--train-every', '1', '--max-tokens', '8',
        '--store', 'postgres', '--store-url', storeUrl.toString(), '--bus', 'nats', '--bus-url', testNatsUrl, '--bus-prefix', busPrefix,
      ]);
      servers.push(server);
      const turnId = await converse(server);
      await checkKeptTurn(server, turnId);
      const tables = await queryTestSchema<{ table_name: string }>(schema, 'SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema]);
      let rows = '';
      for (const { table_name: table } of tables) {
        const texts = await queryTestSchema<{ row: string }>(schema, `SELECT t::text AS row FROM "${table}" t`);
        rows += texts.map((text) => text.row).join('\n');
      }
      expect(rows).toContain(marker);
      for (const needle of forbidden) expect(rows.includes(needle), `${needle} in Postgres`).toBe(false);
      let messages = 0;
      for await (const stream of nats.manager.streams.list()) {
        if (!stream.config.name.includes(busPrefix) && !stream.config.subjects.some((subject) => subject.startsWith(busPrefix))) continue;
        for (let sequence = stream.state.first_seq; sequence <= stream.state.last_seq && stream.state.messages > 0; sequence += 1) {
          const message = await nats.manager.streams.getMessage(stream.config.name, { seq: sequence }).catch(() => null);
          if (message === null) continue;
          messages += 1;
          const data = Buffer.from(message.data);
          for (const needle of forbidden) expect(data.includes(Buffer.from(needle)), `${needle} on ${stream.config.name}`).toBe(false);
        }
      }
      expect(messages).toBeGreaterThan(0);
      await server.stop();
      expect(Object.entries(scanFolder(server.data, forbidden))).toEqual([]);
    } finally {
      await nats.connection.close();
      await dropTestSchema(schema);
    }
  });

  it('sends neither to the judge nor in the OPD teacher and student prompts', async () => {
    const upstream = await startFakeVllmServer({ model: 'fake-model', autoToolChoice: true });
    try {
      const server = await startClawrlServer([
        '--engine', 'vllm', '--upstream', upstream.url, '--model', 'fake-model',
        '--judge', 'openai', '--judge-url', `${upstream.url}/v1`, '--judge-model', 'fake-model', '--method', 'opd', '--no-train',
      ]);
      servers.push(server);
      const session = `redaction-opd-${run}`;
      const opening = { role: 'user', content: `Deploy with OPENAI_API_KEY=${key} and mail ${email} when done. ${marker}` };
      const first = await chat(server.url, session, [opening], 'fake-model');
      await chat(server.url, session, [opening, { role: 'assistant', content: first.content }, { role: 'user', content: `It failed. The key ${key} is right; write to ${email}.` }], 'fake-model');
      // Serving sends what the client sent (the model must read it); nothing after it may.
      const served = upstream.requests.length;
      await json(`${server.url}/v1/feedback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ turn_id: first.turnId, score: 1, hint: `Confirm the deploy and mail ${email} the log.` }),
      });
      for (let attempt = 0; attempt < 60 && (await json<{ samples: { ready: number } }>(`${server.url}/admin/status`)).samples.ready < 1; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const status = await json<{ samples: { ready: number } }>(`${server.url}/admin/status`);
      expect(status.samples.ready, `${JSON.stringify(status)}\n${server.stderr().slice(-3000)}`).toBeGreaterThanOrEqual(1);
      const later = upstream.requests.slice(served).map((request) => `${request.path} ${JSON.stringify(request.body)}`);
      // The judge's votes and the teacher's and student's scoring all went to the upstream, carrying the redacted turn.
      expect(later.filter((request) => request.includes('[REDACTED:api-key]')).length).toBeGreaterThanOrEqual(2);
      expect(later.some((request) => request.includes('[REDACTED:email] the log'))).toBe(true);
      for (const needle of forbidden) expect(later.filter((request) => request.includes(needle))).toEqual([]);
    } finally {
      await upstream.close();
    }
  }, 90_000);
});
