/**
 * Per-user policies served by vLLM: `clawrl serve --engine vllm --adapter-dir --policy-scope user`
 * against the fake vLLM server, with more users than adapters the server holds
 * (`--upstream-max-loras`, the server's `--max-cpu-loras`). Each user trains its own version on
 * its own lineage of the local trainer; then every user's requests, in turns and all at once, are
 * served that user's adapter, which clawrl unloads to make room and loads again on demand, and
 * no request fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { startFakeVllmServer, type FakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { startClawrlServer } from './testing/start-clawrl-server.js';
import { chatAs, trainAs, type PerUserServer } from './testing/per-user-requests.js';

const adminKey = 'admin-key-upstream-scope';
const users = [
  { name: 'acme/ann', key: 'ann-key-upstream' },
  { name: 'acme/bob', key: 'bob-key-upstream' },
  { name: 'acme/cy', key: 'cy-key-upstream' },
] as const;
/** Adapters the server holds at once: fewer than the users. */
const maxLoras = 2;

let folder: string;
let adapterDirectory: string;
let upstream: FakeVllmServer;
let target: PerUserServer;

/** The adapter names the upstream loaded, in order (each load of one name again is a reload). */
const loadsOf = () =>
  upstream.requests.filter((request) => request.path === '/v1/load_lora_adapter').map((request) => (request.body as { lora_name: string }).lora_name);

describe('--policy-scope user on --engine vllm with more users than loaded adapters', () => {
  beforeAll(async () => {
    folder = createTinyModelFolder();
    adapterDirectory = mkdtempSync(path.join(tmpdir(), 'clawrl-adapter-dir-'));
    upstream = await startFakeVllmServer({ mode: 'vllm', model: folder, autoToolChoice: true, maxLoadedAdapters: maxLoras });
    const server = await startClawrlServer([
      '--engine', 'vllm', '--upstream', upstream.url, '--model', folder, '--adapter-dir', adapterDirectory, '--upstream-max-loras', String(maxLoras),
      '--judge', 'rules', '--method', 'rl', '--train-every', '1000', '--max-tokens', '8', '--lora-rank', '4', '--lora-alpha', '8',
      '--policy-scope', 'user', '--admin-key', adminKey, ...users.flatMap((user) => ['--api-key', `${user.name}=${user.key}`]),
    ]);
    target = { server, adminKey, model: path.basename(folder) };
  });
  afterAll(async () => {
    await target?.server.stop();
    await upstream?.close();
    for (const directory of [folder, adapterDirectory, target?.server.data]) if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  it('serves every user its own version, evicting and reloading adapters, and fails no request', async () => {
    // Each user trains its own version from the base: 1, 2, 3.
    for (const [index, user] of users.entries()) {
      expect(await trainAs(target, user.key, `${user.name}-train`, '0')).toMatchObject({ kind: 'trained', step: { policyVersion: index + 1 } });
    }
    const own = (index: number) => String(index + 1);
    const servedName = (turnsBefore: number) => upstream.requests.slice(turnsBefore).find((request) => request.served !== undefined)?.served;

    // In turns: each request goes to the user's own adapter, which may have been unloaded for another's.
    for (let round = 0; round < 3; round += 1) {
      for (const [index, user] of users.entries()) {
        const before = upstream.requests.length;
        const answer = await chatAs(target, user.key, `${user.name}-round-${round}`, 'which version?');
        expect(answer, user.name).toMatchObject({ status: 200, version: own(index) });
        expect(servedName(before), user.name).toContain(`-v${own(index)}-`);
      }
    }
    // All at once: more users than slots, so some requests wait for an adapter to be let go.
    const together = await Promise.all(users.flatMap((user, index) => [0, 1].map(async (copy) => ({ index, ...(await chatAs(target, user.key, `${user.name}-together-${copy}`, 'all at once')) }))));
    for (const answer of together) expect(answer).toMatchObject({ status: 200, version: own(answer.index) });

    // The server never held more than its limit, clawrl unloaded adapters to stay within it and
    // loaded them again when their users came back (vLLM itself never had to re-read one).
    expect(upstream.peakAdapters).toBeLessThanOrEqual(maxLoras);
    expect(upstream.requests.filter((request) => request.path === '/v1/unload_lora_adapter').length).toBeGreaterThan(0);
    const loads = loadsOf();
    expect(new Set(loads).size).toBe(users.length);
    expect(loads.length).toBeGreaterThan(users.length);
    expect(upstream.diskReloads).toBe(0);
    expect(upstream.requests.filter((request) => request.served !== undefined && request.disconnected)).toEqual([]);
  }, 300_000);
});
