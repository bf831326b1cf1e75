/**
 * `clawrl serve --trainer tinker`: the local engine serves the tiny model, training runs on the
 * Tinker-protocol test server (which trains the same tiny model for real). Feedback on four turns
 * makes a step due (`--train-every 4`); the step runs forward_backward and optim_step on the
 * service and publishes version 1 as a Tinker sampler checkpoint.
 */
import path from 'node:path';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { createTinkerTestServer, type TinkerTestServer } from '../src/engines/tinker/testing/create-tinker-test-server.js';
import { repositoryRoot, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

let folder: string;
let tinker: TinkerTestServer;
let server: ClawrlServer;

async function admin<Body>(route: string): Promise<Body> {
  const response = await fetch(`${server.url}${route}`);
  expect(response.status, route).toBe(200);
  return (await response.json()) as Body;
}

beforeAll(async () => {
  folder = createTinyModelFolder();
  tinker = await createTinkerTestServer({
    modelDirectory: folder,
    baseModel: 'tiny',
    apiKey: 'tml-e2e',
    workerUrl: new URL(`file://${path.join(repositoryRoot, 'dist', 'engines', 'local', 'trainer-worker.js')}`),
  });
  server = await startClawrlServer(
    ['--engine', 'local', '--model', folder, '--judge', 'rules', '--method', 'rl', '--max-tokens', '8', '--train-every', '4', '--trainer', 'tinker', '--tinker-url', tinker.url, '--tinker-base-model', 'tiny', '--learning-rate', '0.01'],
    { environment: { CLAWRL_TINKER_API_KEY: 'tml-e2e' } },
  );
});
afterAll(async () => {
  await server?.stop();
  await tinker?.close();
  rmSync(folder, { recursive: true, force: true });
  if (server !== undefined) rmSync(server.data, { recursive: true, force: true });
});

describe('clawrl serve --trainer tinker', () => {
  it('trains a step on the service from feedback and publishes the version', async () => {
    expect(server.stderr()).toContain('training on trainer=tinker');
    for (let index = 0; index < 4; index += 1) {
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-id': `tinker-${index}` },
        body: JSON.stringify({ model: path.basename(folder), messages: [{ role: 'user', content: `hello ${index}` }], temperature: 1 }),
      });
      expect(response.status).toBe(200);
      await response.json();
      const feedback = await fetch(`${server.url}/v1/feedback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ turn_id: response.headers.get('x-clawrl-turn-id'), thumbs: index % 2 === 0 ? 'up' : 'down' }),
      });
      expect(feedback.status).toBe(200);
    }
    let policies: Array<{ version: number; kind: string; metrics?: { samplesUsed?: number } | null }> = [];
    for (let attempt = 0; attempt < 600 && policies.length < 2; attempt += 1) {
      policies = (await admin<{ data: typeof policies }>('/admin/policies')).data;
      if (policies.length < 2) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(policies.map((entry) => [entry.version, entry.kind])).toEqual([[0, 'base'], [1, 'adapter']]);
    expect(policies[1]?.metrics?.samplesUsed).toBe(4);
    const paths = tinker.received.map((request) => request.path);
    for (const name of ['forward', 'forward_backward', 'optim_step', 'save_weights_for_sampler', 'save_weights']) expect(paths).toContain(name);
    expect((await admin<{ trainSteps: number }>('/admin/status')).trainSteps).toBe(1);
  });
});
