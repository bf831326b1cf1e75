/**
 * `clawrl serve --trainer tinker`: training runs on the Tinker-protocol test server (which trains
 * the same tiny model for real). Feedback on four turns makes a step due (`--train-every 4`); the
 * step runs forward_backward and optim_step on the service and publishes version 1 as a Tinker
 * sampler checkpoint. With the local engine serving, the version's PEFT adapter is downloaded from
 * the service's checkpoint archive and the local engine serves it; with `--engine tinker` the whole
 * loop runs on the service and the next request samples version 1 there.
 */
import path from 'node:path';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { trainAs } from './testing/per-user-requests.js';
import { createTinkerTestServer, type TinkerTestServer } from '../src/engines/tinker/testing/create-tinker-test-server.js';
import { repositoryRoot, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

let folder: string;
let tinker: TinkerTestServer;
let server: ClawrlServer;

const tinkerArguments = () => ['--model', folder, '--judge', 'rules', '--method', 'rl', '--max-tokens', '8', '--train-every', '4', '--trainer', 'tinker', '--tinker-url', tinker.url, '--tinker-base-model', 'tiny', '--learning-rate', '0.01'];

/** One chat turn at temperature 1 (what Tinker trains on) with thumbs feedback; the served version. */
async function chatWithFeedback(session: string, thumbs: 'up' | 'down'): Promise<string | null> {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-id': session },
    body: JSON.stringify({ model: path.basename(folder), messages: [{ role: 'user', content: `hello from ${session}` }], temperature: 1 }),
  });
  expect(response.status).toBe(200);
  await response.json();
  const feedback = await fetch(`${server.url}/v1/feedback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ turn_id: response.headers.get('x-clawrl-turn-id'), thumbs }),
  });
  expect(feedback.status).toBe(200);
  return response.headers.get('x-clawrl-policy-version');
}

type Policies = Array<{ version: number; kind: string; active: boolean; metrics?: { samplesUsed?: number } | null }>;

async function policiesOnceTrained(): Promise<Policies> {
  let policies: Policies = [];
  for (let attempt = 0; attempt < 600 && policies.length < 2; attempt += 1) {
    policies = (await admin<{ data: Policies }>('/admin/policies')).data;
    if (policies.length < 2) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return policies;
}

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
    ['--engine', 'local', ...tinkerArguments()],
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
  it('trains a step on the service from feedback, publishes the version and serves its downloaded adapter', async () => {
    expect(server.stderr()).toMatch(/training on .* trainer=tinker/);
    for (let index = 0; index < 4; index += 1) await chatWithFeedback(`local-${index}`, index % 2 === 0 ? 'up' : 'down');
    const policies = await policiesOnceTrained();
    expect(policies.map((entry) => [entry.version, entry.kind])).toEqual([[0, 'base'], [1, 'adapter']]);
    expect(policies[1]?.metrics?.samplesUsed).toBe(4);
    const paths = tinker.received.map((request) => request.path);
    for (const name of ['forward_backward', 'optim_step', 'save_weights_for_sampler', 'save_weights']) expect(paths).toContain(name);
    // The test server stands for the hosted service, which has no /forward: ℓ_old is read with a
    // zero-advantage forward_backward before the one that trains.
    expect(paths.filter((name) => name === 'forward_backward')).toHaveLength(2);
    expect(tinker.forwardBackwardAdvantages[0]?.flat().every((advantage) => advantage === 0)).toBe(true);
    expect((await admin<{ trainSteps: number }>('/admin/status')).trainSteps).toBe(1);
    expect(await chatWithFeedback('local-after-step', 'up')).toBe('1');
  });

  it('with --engine tinker, samples on the service and serves the version it trained there', async () => {
    await server.stop();
    rmSync(server.data, { recursive: true, force: true });
    server = await startClawrlServer(['--engine', 'tinker', ...tinkerArguments()], { environment: { CLAWRL_TINKER_API_KEY: 'tml-e2e' } });
    const samplesBefore = tinker.received.filter((request) => request.path === 'asample').length;
    for (let index = 0; index < 4; index += 1) expect(await chatWithFeedback(`tinker-${index}`, index % 2 === 0 ? 'up' : 'down')).toBe('0');
    expect(tinker.received.filter((request) => request.path === 'asample').length).toBeGreaterThanOrEqual(samplesBefore + 4);
    const policies = await policiesOnceTrained();
    expect(policies.map((entry) => [entry.version, entry.active])).toEqual([[0, false], [1, true]]);
    expect(await chatWithFeedback('after-step', 'up')).toBe('1');
  });

  it('with --policy-scope user, trains each user on a Tinker training client of its own, up to --max-training-clients', async () => {
    await server.stop();
    rmSync(server.data, { recursive: true, force: true });
    const adminKey = 'admin-key-tinker-users';
    const keys = { ann: 'ann-key-tinker', bob: 'bob-key-tinker' };
    server = await startClawrlServer(
      ['--engine', 'local', ...tinkerArguments(), '--train-every', '1000', '--policy-scope', 'user', '--max-training-clients', '3',
        '--admin-key', adminKey, '--api-key', `acme/ann=${keys.ann}`, '--api-key', `acme/bob=${keys.bob}`],
      { environment: { CLAWRL_TINKER_API_KEY: 'tml-e2e' } },
    );
    expect(server.stderr()).toMatch(/training on .* maxTrainingClients=3/);
    const target = { server, adminKey, model: path.basename(folder), temperature: 1 };
    const receivedBefore = tinker.received.length;
    expect(await trainAs(target, keys.ann, 'ann', '0')).toMatchObject({ kind: 'trained', step: { policyVersion: 1 } });
    expect(await trainAs(target, keys.bob, 'bob', '0')).toMatchObject({ kind: 'trained', step: { policyVersion: 2 } });
    expect(await trainAs(target, keys.ann, 'ann-again', '1')).toMatchObject({ kind: 'trained', step: { policyVersion: 3 } });
    // Runs of one model are one step (a step reads ℓ_old with a first pass): ann, bob, ann again on ann's client.
    const trainedOn = tinker.received.slice(receivedBefore)
      .filter((request) => request.path === 'forward_backward')
      .map((request) => request.modelId)
      .filter((model, index, all) => model !== all[index - 1]);
    expect(trainedOn).toHaveLength(3);
    expect(trainedOn[0]).not.toBe(trainedOn[1]);
    expect(trainedOn[2]).toBe(trainedOn[0]);
  });
});
