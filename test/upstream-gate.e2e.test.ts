/**
 * The replay gate on vLLM and SGLang (`clawrl serve --engine vllm|sglang --adapter-dir --gate replay`)
 * against the fake servers: a committed candidate's adapter is loaded under its own name for the gate,
 * the upstream is asked for it only by the gate's replays (one per replayed turn) while every user
 * request meanwhile is served the incumbent, and its evidence is stored on the version.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { startFakeVllmServer, type FakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';
import { expectIncumbentBeforePromotion } from './testing/expect-incumbent-before-promotion.js';

interface PolicyEntry {
  version: number;
  state: string;
  gate: { turns: number; decision: string } | null;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(['vllm', 'sglang'] as const)('the replay gate on %s', (flavor) => {
  it("loads the candidate's adapter for the gate and never sends a user's request to it before promotion", async () => {
    const folder = createTinyModelFolder();
    const model = path.basename(folder);
    const adapterDirectory = mkdtempSync(path.join(tmpdir(), 'clawrl-adapter-dir-'));
    const upstream: FakeVllmServer = await startFakeVllmServer({ mode: flavor, model: flavor === 'vllm' ? folder : model, autoToolChoice: true });
    const server: ClawrlServer = await startClawrlServer([
      '--engine', flavor, '--upstream', upstream.url, '--model', folder, '--adapter-dir', adapterDirectory,
      '--judge', 'rules', '--method', 'rl', '--train-every', '1000', '--lora-rank', '4', '--lora-alpha', '8',
      '--gate', 'replay', '--held-out-share', '0.5', '--gate-min-turns', '2',
    ]);
    cleanups.push(async () => {
      await server.stop();
      await upstream.close();
      for (const directory of [folder, adapterDirectory, server.data]) rmSync(directory, { recursive: true, force: true });
    });
    const admin = async <Body>(route: string, method: 'GET' | 'POST' = 'GET'): Promise<Body> => {
      const response = await fetch(`${server.url}${route}`, { method });
      expect(response.status, `${method} ${route}: ${await response.clone().text()}`).toBe(200);
      return (await response.json()) as Body;
    };
    const chat = async (sessionId: string, content: string) => {
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-id': sessionId },
        body: JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: 8 }),
      });
      expect(response.status).toBe(200);
      await response.json();
      return { turnId: response.headers.get('x-clawrl-turn-id') ?? '', version: response.headers.get('x-clawrl-policy-version') };
    };
    for (let index = 0; index < 10; index += 1) {
      const first = await chat(`recorded-${index}`, 'what is 2 + 3?');
      await chat(`recorded-${index}`, 'thanks, that is right');
      await fetch(`${server.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ turn_id: first.turnId, thumbs: 'up' }) });
    }
    for (let attempt = 0; attempt < 300 && (await admin<{ samples: { ready: number } }>('/admin/status')).samples.ready < 2; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await admin<{ kind: string }>('/admin/training/step', 'POST')).toMatchObject({ kind: 'trained' });

    // Users keep asking while the gate runs: each is served the incumbent, unless the candidate was promoted by then.
    let decided: PolicyEntry | undefined;
    let servedCandidate = 0;
    for (let index = 0; index < 600 && decided === undefined; index += 1) {
      const { version } = await chat(`user-${index}`, 'hello');
      const candidate = (await admin<{ data: PolicyEntry[] }>('/admin/policies')).data[1];
      if (expectIncumbentBeforePromotion(version, candidate)) servedCandidate += 1;
      if (candidate !== undefined && candidate.state !== 'candidate') decided = candidate;
    }
    expect(decided?.gate?.turns).toBeGreaterThanOrEqual(2);
    const name = [...upstream.adapters.keys()].find((candidate) => candidate.includes('-v1-'));
    expect(name, 'the candidate adapter is loaded on the upstream').toBeDefined();
    const loadIndex = upstream.requests.findIndex((request) => request.path.endsWith('load_lora_adapter'));
    const askedForCandidate = upstream.requests.filter((request) => request.served === name);
    expect(loadIndex).toBeGreaterThanOrEqual(0);
    // Before the promotion only the gate asked for it: one answer per replayed turn.
    expect(askedForCandidate.length - servedCandidate).toBe(decided?.gate?.turns ?? -1);
  });
});
