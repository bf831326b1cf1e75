/**
 * The real server in front of a vLLM-shaped upstream for one test file: both started before its
 * tests and stopped after them, as a user runs `clawrl serve --engine vllm`.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { startFakeVllmServer, type FakeVllmServer } from '../../src/engines/testing/fake-vllm-server.js';
import { startClawrlServer, type ClawrlServer } from './start-clawrl-server.js';

export interface ClawrlOnFakeVllm {
  readonly server: ClawrlServer;
  readonly upstream: FakeVllmServer;
  /** `GET /admin/turns/{id}`, which must answer 200. */
  adminTurn(id: string): Promise<Record<string, unknown>>;
}

export function useClawrlOnFakeVllm(): ClawrlOnFakeVllm {
  let upstream: FakeVllmServer | undefined;
  let server: ClawrlServer | undefined;
  beforeAll(async () => {
    upstream = await startFakeVllmServer({ model: 'fake-model', autoToolChoice: true });
    server = await startClawrlServer(['--engine', 'vllm', '--upstream', upstream.url, '--model', 'fake-model']);
  });
  afterAll(async () => {
    await server?.stop();
    await upstream?.close();
  });
  const started = <Value>(value: Value | undefined): Value => {
    if (value === undefined) throw new Error('the server is not started: use it inside a test');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get upstream() {
      return started(upstream);
    },
    async adminTurn(id) {
      const response = await fetch(`${started(server).url}/admin/turns/${id}`);
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, unknown>;
    },
  };
}
