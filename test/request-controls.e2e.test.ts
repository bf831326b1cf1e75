/**
 * The per-request controls on the real server (`dist/cli/main.js serve` over a fake vLLM, judged by
 * the rules judge): `X-Clawrl-Policy-Version` pins, retry orphans kept but never trained on,
 * `X-Clawrl-Train: off` (and a key's `--key-consent` default) never becoming samples, and
 * `X-Clawrl-Record: off` leaving no row and no byte under `--data`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVllmServer, type FakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

const userKey = 'user-key-123456';
const ciKey = 'ci-key-1234567';
const adminKey = 'admin-key-12345';

let upstream: FakeVllmServer;
let server: ClawrlServer;

interface TurnView {
  trainable: boolean;
  untrainableReason: string | null;
  supersededBy: string | null;
  nextState: unknown[] | null;
  judgements: unknown[];
  samples: Array<{ status: string }>;
}

interface Sent {
  status: number;
  turnId: string;
  reply: string;
  headers: Headers;
}

const user = (content: string) => ({ role: 'user', content });

async function chat(messages: unknown[], headers: Record<string, string> = {}, key = userKey): Promise<Sent> {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify({ model: 'fake-model', messages }),
  });
  const body = (await response.json()) as { choices?: Array<{ message: { content: string } }> };
  return { status: response.status, turnId: response.headers.get('x-clawrl-turn-id') ?? '', reply: body.choices?.[0]?.message.content ?? '', headers: response.headers };
}

async function admin<Body>(route: string): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${server.url}${route}`, { headers: { authorization: `Bearer ${adminKey}` } });
  return { status: response.status, body: (await response.json()) as Body };
}

const turnView = async (turnId: string) => (await admin<TurnView>(`/admin/turns/${turnId}`)).body;

async function feedback(turnId: string): Promise<void> {
  const response = await fetch(`${server.url}/v1/feedback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
    body: JSON.stringify({ turn_id: turnId, thumbs: 'down' }),
  });
  expect(response.status).toBe(200);
}

async function waitForSample(turnId: string): Promise<TurnView> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    const view = await turnView(turnId);
    if (view.samples.length > 0) return view;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`turn ${turnId} got no sample in time`);
}

/** A two-turn session: the first turn's next state says it was wrong, and both get feedback. */
async function judgedSession(sessionId: string, headers: Record<string, string> = {}, key = userKey): Promise<[string, string]> {
  const first = await chat([user(`question of ${sessionId}`)], { 'x-session-id': sessionId, ...headers }, key);
  const second = await chat([user(`question of ${sessionId}`), { role: 'assistant', content: first.reply }, user('No, that is wrong, do it again.')], { 'x-session-id': sessionId, ...headers }, key);
  await feedback(first.turnId);
  await feedback(second.turnId);
  return [first.turnId, second.turnId];
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const entry = path.join(folder, name);
    return statSync(entry).isDirectory() ? filesUnder(entry) : [entry];
  });
}

beforeAll(async () => {
  upstream = await startFakeVllmServer({ model: 'fake-model', autoToolChoice: true });
  server = await startClawrlServer([
    '--engine', 'vllm', '--upstream', upstream.url, '--model', 'fake-model', '--judge', 'rules', '--method', 'rl',
    '--api-key', `user=${userKey}`, '--api-key', `ci=${ciKey}`, '--admin-key', adminKey, '--key-consent', 'ci=train-off',
  ]);
});
afterAll(async () => {
  await server?.stop();
  await upstream?.close();
});

describe('per-request controls on the real server', () => {
  it('pins a version on every protocol, says which served, and refuses unknown or malformed pins in the protocol\'s shape', async () => {
    const pinned = await chat([user('pinned')], { 'x-clawrl-policy-version': '0' });
    expect(pinned.status).toBe(200);
    expect(pinned.headers.get('x-clawrl-policy-version')).toBe('0');
    const unknown = await chat([user('pinned')], { 'x-clawrl-policy-version': '42' });
    expect(unknown.status).toBe(400);
    const malformed = await chat([user('pinned')], { 'x-clawrl-policy-version': 'newest' });
    expect(malformed.status).toBe(400);
    const responses = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${userKey}`, 'x-clawrl-policy-version': '42' },
      body: JSON.stringify({ model: 'fake-model', input: 'pinned' }),
    });
    expect(responses.status).toBe(400);
    expect(((await responses.json()) as { error: { message: string; param: string } }).error).toMatchObject({ param: 'X-Clawrl-Policy-Version', message: expect.stringContaining('Policy version 42') });
    const messages = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': userKey, 'x-clawrl-policy-version': '42' },
      body: JSON.stringify({ model: 'fake-model', max_tokens: 16, messages: [user('pinned')] }),
    });
    expect(messages.status).toBe(400);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('Policy version 42') } });
    const served = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': userKey, 'x-clawrl-policy-version': '0' },
      body: JSON.stringify({ model: 'fake-model', max_tokens: 16, messages: [user('pinned')] }),
    });
    expect(served.status).toBe(200);
    expect(served.headers.get('x-clawrl-policy-version')).toBe('0');
  });

  it('keeps a retry orphan, marked, and never trains on it: recorded before the retry, or still streaming when it came', async () => {
    const headers = { 'x-session-id': 'retried' };
    const opening = await chat([user('retry me')], headers);
    const second = [user('retry me'), { role: 'assistant', content: opening.reply }, user('and the next step?')];
    const recordedOrphan = await chat(second, headers);
    // The first send of the third turn is still streaming when the SDK gives up and sends it again.
    const third = (reply: string) => [...second, { role: 'assistant', content: reply }, user('go on')];
    const retry = await chat(second, headers);
    // Only the first generation is held (clawrl may stream from the upstream for any request).
    let generations = 0;
    const release = upstream.holdStreams(() => (generations += 1) === 1);
    const streaming = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${userKey}`, ...headers },
      body: JSON.stringify({ model: 'fake-model', messages: third(retry.reply), stream: true }),
    });
    const streamingOrphan = streaming.headers.get('x-clawrl-turn-id') ?? '';
    const thirdRetry = await chat(third(retry.reply), headers);
    release();
    await streaming.text();
    await chat([...third(retry.reply), { role: 'assistant', content: thirdRetry.reply }, user('No, that is wrong, do it again.')], headers);
    for (const turnId of [recordedOrphan.turnId, streamingOrphan]) await feedback(turnId);
    await feedback(retry.turnId);
    expect(await waitForSample(retry.turnId)).toMatchObject({ supersededBy: null, trainable: true });
    expect(await waitForSample(thirdRetry.turnId)).toMatchObject({ supersededBy: null });
    for (const [orphan, by] of [[recordedOrphan.turnId, retry.turnId], [streamingOrphan, thirdRetry.turnId]]) {
      expect(await turnView(orphan ?? '')).toMatchObject({ trainable: false, untrainableReason: 'superseded', supersededBy: by, nextState: null, judgements: [], samples: [] });
    }
  });

  it('never makes samples of X-Clawrl-Train: off turns, nor of a train-off key\'s turns unless a request turns training on', async () => {
    const trained = await judgedSession('consenting');
    const byHeader = await judgedSession('header-off', { 'x-clawrl-train': 'off' });
    const byKey = await judgedSession('key-off', {}, ciKey);
    const keyOverridden = await judgedSession('key-on', { 'x-clawrl-train': 'on' }, ciKey);
    await waitForSample(trained[0]);
    await waitForSample(trained[1]);
    await waitForSample(keyOverridden[0]);
    for (const turnId of [...byHeader, ...byKey]) {
      expect(await turnView(turnId)).toMatchObject({ trainable: false, untrainableReason: 'train-off', judgements: [], samples: [] });
    }
    expect((await turnView(byHeader[0])).nextState).not.toBeNull();
  });

  it('leaves no row and no byte of an X-Clawrl-Record: off turn', async () => {
    const before = (await admin<{ sessions: number; turns: { main: number; side: number } }>('/admin/status')).body;
    const marker = `unrecorded-marker-${Date.now()}`;
    const sent = await chat([user(`keep this to yourself: ${marker}`)], { 'x-session-id': 'unrecorded-session', 'x-clawrl-record': 'off' });
    expect(sent.status).toBe(200);
    expect(sent.headers.get('x-clawrl-record')).toBe('off');
    expect((await admin(`/admin/turns/${sent.turnId}`)).status).toBe(404);
    const sessions = (await admin<{ data: Array<{ id: string }> }>('/admin/sessions')).body.data;
    expect(sessions.map((session) => session.id)).not.toContain('unrecorded-session');
    const after = (await admin<typeof before>('/admin/status')).body;
    expect(after).toMatchObject({ sessions: before.sessions, turns: before.turns });
    for (const file of filesUnder(server.data)) expect(readFileSync(file).includes(marker), file).toBe(false);
  });
});
