/**
 * `/healthz` and `/readyz` of the real server in front of a remote engine: 503 with the reason
 * while the upstream does not answer, 200 once it does (after the short cache).
 */
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

let server: ClawrlServer | undefined;
let upstream: Server | undefined;
afterAll(async () => {
  await server?.stop();
  if (server !== undefined) rmSync(server.data, { recursive: true, force: true });
  await new Promise((resolve) => (upstream === undefined ? resolve(undefined) : upstream.close(resolve)));
});

/** A port nothing listens on (taken and given back). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('health of a server whose remote engine is down', () => {
  it('answers 503 with the reason while the upstream does not answer, and 200 once it does', async () => {
    const port = await freePort();
    server = await startClawrlServer(['--engine', 'openai', '--upstream', `http://127.0.0.1:${port}`, '--model', 'gpt-test', '--no-train']);

    const health = await get(`${server.url}/healthz`);
    expect(health.status).toBe(503);
    expect(health.body).toEqual({
      status: 'unavailable',
      model: 'gpt-test',
      reason: expect.stringMatching(new RegExp(`^the openai upstream at http://127\\.0\\.0\\.1:${port} did not answer: .*ECONNREFUSED`)),
    });
    const ready = await get(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      status: 'unavailable',
      engine: { status: 'unavailable', engine: 'openai', reason: health.body.reason },
      store: { status: 'ok', activePolicyVersion: 0 },
      training: { status: 'off' },
    });

    upstream = createServer((request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(request.url === '/v1/models' ? '{"object":"list","data":[{"id":"gpt-test","object":"model"}]}' : '{}');
    });
    await new Promise<void>((resolve) => upstream?.listen(port, '127.0.0.1', resolve));
    // The last answer is kept for a couple of seconds; poll until it expires.
    let status = 503;
    for (let attempt = 0; attempt < 40 && status !== 200; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      status = (await get(`${server.url}/healthz`)).status;
    }
    expect(await get(`${server.url}/healthz`)).toEqual({ status: 200, body: { status: 'ok', model: 'gpt-test' } });
    expect(await get(`${server.url}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready', engine: { status: 'ok', engine: 'openai' } } });
  });
});
