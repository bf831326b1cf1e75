import { afterEach, describe, expect, it } from 'vitest';
import { startFakeVllmServer, type FakeVllmServer } from '../testing/fake-vllm-server.js';
import { probeAutoToolChoice } from './probe-auto-tool-choice.js';

const servers: FakeVllmServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function probeOf(options: Parameters<typeof startFakeVllmServer>[0], model = 'fake-model') {
  const server = await startFakeVllmServer(options);
  servers.push(server);
  return { server, result: await probeAutoToolChoice({ baseUrl: server.url, model, timeoutMs: 5_000 }) };
}

describe('probeAutoToolChoice', () => {
  it('finds a vLLM started without --enable-auto-tool-choice --tool-call-parser, with one one-token request offering a tool', async () => {
    const { server, result } = await probeOf({});
    expect(result).toEqual({ outcome: 'refused', message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set' });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.body).toMatchObject({ tool_choice: 'auto', max_tokens: 1, tools: [{ type: 'function' }] });
  });

  it('passes a vLLM started with the flags', async () => {
    expect((await probeOf({ autoToolChoice: true })).result).toEqual({ outcome: 'accepted' });
  });

  it('cannot tell when the server does not answer the request: a wrong model name, nothing listening', async () => {
    const { result } = await probeOf({}, 'another-model');
    expect(result).toMatchObject({ outcome: 'unknown', reason: expect.stringContaining('HTTP 404') as unknown });
    const nothing = await probeAutoToolChoice({ baseUrl: 'http://127.0.0.1:9', model: 'fake-model', timeoutMs: 2_000 });
    expect(nothing.outcome).toBe('unknown');
  });
});
