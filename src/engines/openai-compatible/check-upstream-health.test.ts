import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { checkUpstreamHealth } from './check-upstream-health.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('checkUpstreamHealth', () => {
  it('is ok when GET /v1/models answers 2xx, with the API key and whether or not the URL ends in /v1', async () => {
    const seen: string[] = [];
    const url = await serve((request, response) => {
      seen.push(`${request.url} ${request.headers.authorization}`);
      response.end('{"object":"list","data":[]}');
    });
    expect(await checkUpstreamHealth({ baseUrl: url, apiKey: 'sk-test', name: 'vllm', signal: AbortSignal.timeout(2_000) })).toEqual({ ok: true });
    expect(await checkUpstreamHealth({ baseUrl: `${url}/v1/`, name: 'vllm', signal: AbortSignal.timeout(2_000) })).toEqual({ ok: true });
    expect(seen).toEqual(['/v1/models Bearer sk-test', '/v1/models undefined']);
  });

  it('says which upstream refused the connection', async () => {
    const url = await serve(() => undefined);
    // Closed again, so its port refuses.
    await new Promise((resolve) => servers.pop()?.close(resolve));
    const health = await checkUpstreamHealth({ baseUrl: url, name: 'vllm', signal: AbortSignal.timeout(2_000) });
    expect(health).toEqual({ ok: false, reason: expect.stringMatching(new RegExp(`^the vllm upstream at ${url} did not answer: .*ECONNREFUSED`)) });
  });

  it('says when the upstream answers with an HTTP error, such as a refused API key', async () => {
    const url = await serve((_request, response) => {
      response.statusCode = 401;
      response.end('{"error":{"message":"bad key"}}');
    });
    expect(await checkUpstreamHealth({ baseUrl: url, name: 'openai', signal: AbortSignal.timeout(2_000) })).toEqual({
      ok: false,
      reason: `the openai upstream at ${url} answered HTTP 401 to GET /v1/models`,
    });
  });

  it('gives up when the upstream does not answer before the signal aborts', async () => {
    const url = await serve(() => undefined);
    const health = await checkUpstreamHealth({ baseUrl: url, name: 'sglang', signal: AbortSignal.timeout(100) });
    expect(health).toEqual({ ok: false, reason: `the sglang upstream at ${url} did not answer: no answer in time` });
    for (const server of servers) server.closeAllConnections();
  });
});
