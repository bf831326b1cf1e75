/** Crash safety and graceful shutdown, tested by signalling the real server process. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVllmServer, type FakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { createDataDirectory, startClawrlServer } from './testing/start-clawrl-server.js';

let upstream: FakeVllmServer;

beforeAll(async () => {
  upstream = await startFakeVllmServer({ model: 'fake-model', tokensPerSecond: 400, autoToolChoice: true });
});
afterAll(async () => {
  await upstream?.close();
});

const serverArguments = () => ['--engine', 'vllm', '--upstream', upstream.url, '--model', 'fake-model'];

async function chat(url: string, stream: boolean, text: string): Promise<string> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-id': 'durable' },
    body: JSON.stringify({ model: 'fake-model', stream, messages: [{ role: 'user', content: text }] }),
  });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${body}`);
  if (stream && !body.includes('data: [DONE]')) throw new Error('stream ended without [DONE]');
  return response.headers.get('x-clawrl-turn-id') ?? '';
}

describe('durability', () => {
  it('keeps every acknowledged turn when the process is killed with SIGKILL mid-traffic', async () => {
    const data = createDataDirectory();
    const server = await startClawrlServer(serverArguments(), { data });
    const acknowledged: string[] = [];
    let stop = false;
    const workers = Array.from({ length: 4 }, async (_, worker) => {
      for (let index = 0; !stop; index += 1) {
        try {
          acknowledged.push(await chat(server.url, index % 2 === 0, `hello ${worker} ${index}`));
        } catch {
          return; // the server died under this request: it was never acknowledged
        }
      }
    });
    while (acknowledged.length < 24) await new Promise((resolve) => setTimeout(resolve, 10));
    await server.kill();
    stop = true;
    await Promise.all(workers);

    const restarted = await startClawrlServer(serverArguments(), { data });
    try {
      for (const turnId of acknowledged) {
        const response = await fetch(`${restarted.url}/admin/turns/${turnId}`);
        expect(response.status, `turn ${turnId}`).toBe(200);
        const turn = (await response.json()) as { status: string; responseTokenIds: number[]; logprobs: number[] };
        expect(turn.status).toBe('completed');
        expect(turn.responseTokenIds.length).toBeGreaterThan(0);
        expect(turn.logprobs.length).toBe(turn.responseTokenIds.length);
      }
    } finally {
      await restarted.stop();
    }
  });

  it('drains an in-flight stream on SIGTERM, refuses new connections and exits cleanly', async () => {
    const slow = await startFakeVllmServer({ model: 'fake-model', tokensPerSecond: 25, autoToolChoice: true });
    const data = createDataDirectory();
    const server = await startClawrlServer(['--engine', 'vllm', '--upstream', slow.url, '--model', 'fake-model'], { data });
    try {
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'one two three four five one two three' }] }),
      });
      const turnId = response.headers.get('x-clawrl-turn-id') ?? '';
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value);
      const exitCode = server.stop();
      await new Promise((resolve) => setTimeout(resolve, 100));
      await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
      for (let next = await reader.read(); !next.done; next = await reader.read()) text += decoder.decode(next.value);
      expect(text).toContain('data: [DONE]');
      expect(await exitCode).toBe(0);

      const restarted = await startClawrlServer(['--engine', 'vllm', '--upstream', slow.url, '--model', 'fake-model'], { data });
      try {
        const turn = (await (await fetch(`${restarted.url}/admin/turns/${turnId}`)).json()) as { status: string };
        expect(turn.status).toBe('completed');
      } finally {
        await restarted.stop();
      }
    } finally {
      await server.kill();
      await slow.close();
    }
  });
});
