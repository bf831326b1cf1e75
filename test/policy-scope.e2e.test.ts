/**
 * Per-user policies (`--policy-scope user`) in `clawrl serve --engine local`: two keys name two
 * users; one user's feedback trains that user's lineage and that user is served its version while
 * the other is still served the base, then the other trains its own; rolling one back leaves the
 * other alone, and no user is served, or may pin, another's version.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { cliPath, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';
import { adminRequest, chatAs, trainAs, type PerUserServer } from './testing/per-user-requests.js';

const adminKey = 'admin-key-scope';
const keys = { ann: 'ann-key-scope', bob: 'bob-key-scope' };
let folder: string;
let model: string;
let server: ClawrlServer;

interface PolicyEntry {
  version: number;
  parent: number | null;
  user: string | null;
  active: boolean;
  state: string;
}

const target = (): PerUserServer => ({ server, adminKey, model });
const admin = <Body>(route: string, method: 'GET' | 'POST' = 'GET') => adminRequest<Body>(target(), route, method);

const lineages = async (query = '') =>
  (await admin<{ data: PolicyEntry[] }>(`/admin/policies${query}`)).data.map((entry) => [entry.version, entry.user, entry.parent, entry.active]);

const chat = (user: keyof typeof keys, sessionId: string, content: string, headers: Record<string, string> = {}) => chatAs(target(), keys[user], sessionId, content, headers);
const trainOn = (user: keyof typeof keys, prefix: string, expectedVersion: string) => trainAs(target(), keys[user], prefix, expectedVersion);

const servedVersion = async (user: keyof typeof keys, sessionId: string) => (await chat(user, sessionId, 'which version?')).version;

describe('--policy-scope user', () => {
  beforeAll(() => {
    folder = createTinyModelFolder();
    model = path.basename(folder);
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('refuses a gate or a canary at start-up in one line', async () => {
    const refused = await promisify(execFile)(process.execPath, [cliPath, 'serve', '--engine', 'local', '--model', folder, '--policy-scope', 'user', '--gate', 'replay', '--port', '0'], { timeout: 60_000 })
      .then(() => null, (error: { stderr: string; code: number }) => error);
    expect(refused?.code).not.toBe(0);
    expect(refused?.stderr).toContain('--policy-scope user has no gate or canary');
  });

  it('trains each user\'s own lineage and serves it to that user alone; rolling one back leaves the other alone', async () => {
    server = await startClawrlServer([
      '--engine', 'local', '--model', folder, '--judge', 'rules', '--method', 'rl', '--train-every', '1000', '--max-tokens', '8',
      '--policy-scope', 'user', '--admin-key', adminKey, '--api-key', `acme/ann=${keys.ann}`, '--api-key', `acme/bob=${keys.bob}`,
    ]);
    try {
      // Ann trains first: she gets version 1 while Bob is still served the base.
      expect(await trainOn('ann', 'ann-a', '0')).toMatchObject({ kind: 'trained', step: { policyVersion: 1 } });
      expect(await lineages()).toEqual([[0, null, null, true], [1, 'acme/ann', 0, true]]);
      expect(await servedVersion('ann', 'ann-check-1')).toBe('1');
      expect(await servedVersion('bob', 'bob-check-1')).toBe('0');

      // Bob's own feedback trains his own lineage, from the base, on his samples alone.
      expect(await trainOn('bob', 'bob-a', '0')).toMatchObject({ kind: 'trained', step: { policyVersion: 2 } });
      expect(await servedVersion('bob', 'bob-check-2')).toBe('2');
      expect(await servedVersion('ann', 'ann-check-2')).toBe('1');

      // Ann trains on from her version 1, then is rolled back to it: Bob keeps his version 2.
      expect(await trainOn('ann', 'ann-b', '1')).toMatchObject({ kind: 'trained', step: { policyVersion: 3 } });
      expect(await lineages('?user=acme/ann')).toEqual([[1, 'acme/ann', 0, false], [3, 'acme/ann', 1, true]]);
      expect(await servedVersion('ann', 'ann-check-3')).toBe('3');
      await promisify(execFile)(process.execPath, [cliPath, 'policy', 'activate', '1', '--url', server.url, '--admin-key', adminKey]);
      expect(await servedVersion('ann', 'ann-check-4')).toBe('1');
      expect(await servedVersion('bob', 'bob-check-4')).toBe('2');
      expect(await lineages()).toEqual([[0, null, null, true], [1, 'acme/ann', 0, true], [2, 'acme/bob', 0, true], [3, 'acme/ann', 1, false]]);
      const listed = await promisify(execFile)(process.execPath, [cliPath, 'policy', 'list', '--user', 'acme/bob', '--url', server.url, '--admin-key', adminKey]);
      expect(listed.stdout).toMatch(/\*\s+2\s+active\s+0\s+acme\/bob/);
      expect(listed.stdout).not.toMatch(/acme\/ann/);

      // Nobody is served another user's version, not even by pinning it.
      const pinned = await chat('bob', 'bob-pin', 'ann\'s version please', { 'x-clawrl-policy-version': '1' });
      expect(pinned.status).toBe(404);
      expect((await chat('bob', 'bob-own-pin', 'my own base', { 'x-clawrl-policy-version': '0' })).version).toBe('0');
    } finally {
      await server.stop();
      rmSync(server.data, { recursive: true, force: true });
    }
  }, 300_000);
});
