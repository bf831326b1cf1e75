import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import { createTestGateway, readEvents } from './testing/create-test-gateway.js';

const model = 'scripted-model';
const hello = { model, messages: [{ role: 'user', content: 'hi there' }] };

/** POSTs `parts` as a chunked body (no content-length), as streaming clients may. */
function postChunked(url: string, parts: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (incoming) => {
      let body = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => (body += chunk));
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body }));
    });
    outgoing.on('error', reject);
    for (const part of parts) outgoing.write(part);
    outgoing.end();
  });
}

/** Polls `read` until it gives something (the turn of a disconnected client is recorded after the fact). */
async function eventually<Value>(read: () => Promise<Value | null>): Promise<Value | null> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const value = await read();
    if (value !== null) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return null;
}

describe('the gateway request listener', () => {
  it('refuses a chunked body over the limit with 413, and a declared one before reading it', async () => {
    const gateway = createTestGateway({ limits: { bodyLimitBytes: 1000 } });
    const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'x'.repeat(2000) }] });
    const chunked = await postChunked(await gateway.url(), [body.slice(0, 600), body.slice(600)]);
    expect(chunked.status).toBe(413);
    expect((JSON.parse(chunked.body) as { error: { code: string } }).error.code).toBe('request_too_large');
    const declared = await gateway.chat(body);
    expect(declared.status).toBe(413);
    expect(declared.headers.get('content-type')).toBe('application/json');
    const small = await postChunked(await gateway.url(), [JSON.stringify(hello).slice(0, 10), JSON.stringify(hello).slice(10)]);
    expect(small.status).toBe(200);
    expect(await gateway.store.counts()).toMatchObject({ turns: { main: 1 } });
  });

  it('answers an engine failure before the first event with a JSON error and records nothing', async () => {
    const gateway = createTestGateway();
    gateway.engine.failNext = new ClawrlError('upstream_error', 'upstream said 500');
    const response = await gateway.chat({ ...hello, stream: true });
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: { code: string; type: string } }).error).toMatchObject({ code: 'upstream_error', type: 'api_error' });
    expect(await gateway.store.counts()).toMatchObject({ turns: { main: 0 } });
  });

  it('reports a failure after the headers in the stream, ends it with [DONE] and records the turn as failed', async () => {
    const gateway = createTestGateway();
    gateway.engine.failNextMidStream = new ClawrlError('upstream_timeout', 'no more tokens');
    const response = await gateway.chat({ ...hello, stream: true });
    expect(response.status).toBe(200);
    const { events, done } = await readEvents(response);
    expect(done).toBe(true);
    expect(events.at(-1)).toMatchObject({ error: { code: 'upstream_timeout', message: 'no more tokens' } });
    const turn = await gateway.store.getTurn(response.headers.get('x-clawrl-turn-id') ?? '');
    expect(turn).toMatchObject({ status: 'failed', trainable: false, error: 'no more tokens' });
  });

  it('records a non-streaming turn whose client went away as aborted', async () => {
    const gateway = createTestGateway();
    gateway.engine.tokenDelayMs = 10;
    const body = JSON.stringify({ ...hello, messages: [{ role: 'user', content: 'a long question indeed, longer still' }] });
    const outgoing = httpRequest(`${await gateway.url()}/v1/chat/completions`, { method: 'POST', headers: { 'x-session-id': 'gone' } });
    outgoing.on('error', () => undefined);
    outgoing.end(body);
    while (gateway.engine.generateCalls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    outgoing.destroy();
    const last = await eventually(() => gateway.store.getLastMainTurn('gone'));
    const turn = await gateway.store.getTurn(last?.id ?? '');
    expect(turn).toMatchObject({ status: 'aborted', trainable: false });
    expect(turn!.response.content.length).toBeLessThan('echo: a long question indeed, longer still'.length);
  });

  it('takes a percent-encoded session from the prefix and ignores the query string', async () => {
    const gateway = createTestGateway();
    const response = await gateway.chat(hello, {}, '/s/team%2Fone/v1/chat/completions?trace=1');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-clawrl-session-id')).toBe('team/one');
  });

  it('answers 500 when a header cannot be sent, and still records the turn and frees the key slot', async () => {
    const gateway = createTestGateway({ limits: { concurrencyPerKey: 1 } });
    for (const stream of [true, false]) {
      const response = await gateway.chat({ ...hello, stream, session_id: 'line\nbreak' });
      expect(response.status).toBe(500);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('internal_error');
    }
    expect(await gateway.store.counts()).toMatchObject({ turns: { main: 2 } });
    expect((await gateway.chat(hello)).status).toBe(200);
  });

  it('leaves other methods and routes to the app, and counts chat requests in the metrics', async () => {
    const gateway = createTestGateway();
    const base = await gateway.url();
    const wrongMethod = await fetch(`${base}/v1/chat/completions`);
    expect(wrongMethod.status).toBe(404);
    expect(((await wrongMethod.json()) as { error: { type: string } }).error.type).toBe('not_found_error');
    expect((await fetch(`${base}/v1/models`)).status).toBe(200);
    await gateway.chat(hello);
    await gateway.chat({ model, messages: [] });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/route="chat",status="200"} 1/);
    expect(metrics).toMatch(/route="chat",status="400"} 1/);
  });

  it('checks the API key before reading the body', async () => {
    const gateway = createTestGateway({ apiKeys: [{ tenant: 'alice', key: 'alice-secret' }], limits: { bodyLimitBytes: 10 } });
    const response = await gateway.chat(hello);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
  });

  it('records a streamed turn whose client disconnected as aborted', async () => {
    const gateway = createTestGateway();
    gateway.engine.tokenDelayMs = 10;
    const client = new AbortController();
    const response = await fetch(`${await gateway.url()}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ ...hello, stream: true, messages: [{ role: 'user', content: 'a long question indeed, longer still' }] }),
      signal: client.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    client.abort();
    const turn = await eventually(() => gateway.store.getTurn(response.headers.get('x-clawrl-turn-id') ?? ''));
    expect(turn).toMatchObject({ status: 'aborted', trainable: false, error: 'client disconnected' });
  });

  it.each([
    ['/v1/responses', { model, stream: true, input: 'a long question indeed, longer still' }],
    ['/v1/messages', { model, stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'a long question indeed, longer still' }] }],
  ])('records a %s stream whose client disconnected as aborted and frees its slot', async (path, body) => {
    const gateway = createTestGateway({ limits: { concurrencyPerKey: 1 } });
    gateway.engine.tokenDelayMs = 10;
    const client = new AbortController();
    const response = await fetch(`${await gateway.url()}${path}`, { method: 'POST', body: JSON.stringify(body), signal: client.signal });
    const reader = response.body!.getReader();
    await reader.read();
    client.abort();
    const turn = await eventually(() => gateway.store.getTurn(response.headers.get('x-clawrl-turn-id') ?? ''));
    expect(turn).toMatchObject({ status: 'aborted', trainable: false, error: 'client disconnected' });
    gateway.engine.tokenDelayMs = 0;
    expect((await gateway.chat(hello)).status).toBe(200);
  });
});
