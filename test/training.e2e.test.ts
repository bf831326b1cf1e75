/**
 * Training inside `clawrl serve --engine local`: sessions with feedback become samples, a step on
 * demand publishes version 1, which is served (X-Clawrl-Policy-Version), rollback to the base is
 * served, and a kill -9 during a step followed by a restart resumes from the checkpoint.
 */
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { cliPath, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

let folder: string;
let server: ClawrlServer;
let model: string;
const serverArguments = () => ['--engine', 'local', '--model', folder, '--judge', 'rules', '--method', 'rl', '--train-every', '1000', '--max-tokens', '12'];

interface Status {
  trainSteps: number;
  policyVersion: number;
  samples: { ready: number; trained: number; dropped: number };
  training: { enabled: boolean; paused: boolean };
}

async function chat(sessionId: string): Promise<{ turnId: string; version: string | null }> {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-id': sessionId },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: `hello from ${sessionId}` }], temperature: 0.8 }),
  });
  expect(response.status).toBe(200);
  await response.json();
  return { turnId: response.headers.get('x-clawrl-turn-id') ?? '', version: response.headers.get('x-clawrl-policy-version') };
}

async function admin<Body>(route: string, method: 'GET' | 'POST' = 'GET'): Promise<Body> {
  const response = await fetch(`${server.url}${route}`, { method });
  expect(response.status, `${method} ${route}`).toBe(200);
  return (await response.json()) as Body;
}

/** Sessions of one turn each with thumbs feedback; resolves once their samples are ready. */
async function sessionsWithFeedback(prefix: string, count: number): Promise<void> {
  const before = (await admin<Status>('/admin/status')).samples.ready;
  for (let index = 0; index < count; index += 1) {
    const { turnId } = await chat(`${prefix}-${index}`);
    const feedback = await fetch(`${server.url}/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ turn_id: turnId, thumbs: index % 2 === 0 ? 'up' : 'down' }),
    });
    expect(feedback.status).toBe(200);
  }
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if ((await admin<Status>('/admin/status')).samples.ready >= before + count) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the samples of ${prefix} were not built in time`);
}

async function waitForOutput(text: string): Promise<void> {
  for (let attempt = 0; attempt < 600 && !server.stderr().includes(text); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(server.stderr()).toContain(text);
}

beforeAll(async () => {
  folder = createTinyModelFolder();
  model = path.basename(folder);
  server = await startClawrlServer(serverArguments());
});
afterAll(async () => {
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
  if (server !== undefined) rmSync(server.data, { recursive: true, force: true });
});

describe('training inside clawrl serve', () => {
  it('trains on feedback, serves the new version, rolls back and forward', async () => {
    expect((await admin<{ data: unknown[] }>('/admin/policies')).data).toEqual([
      expect.objectContaining({ version: 0, parent: null, active: true, kind: 'base' }),
    ]);
    await sessionsWithFeedback('first', 3);
    const outcome = await admin<{ kind: string; step: { step: number; policyVersion: number; samplesUsed: number } }>('/admin/training/step', 'POST');
    expect(outcome).toMatchObject({ kind: 'trained', step: { step: 1, policyVersion: 1, samplesUsed: 3 } });

    expect((await chat('after-step')).version).toBe('1');
    const status = await admin<Status>('/admin/status');
    expect(status).toMatchObject({ trainSteps: 1, policyVersion: 1, samples: { ready: 0, trained: 3 }, training: { enabled: true, paused: false } });
    const policies = (await admin<{ data: Array<Record<string, unknown>> }>('/admin/policies')).data;
    expect(policies.map((entry) => [entry.version, entry.parent, entry.active, entry.kind])).toEqual([[0, null, false, 'base'], [1, 0, true, 'adapter']]);
    expect(policies[1]?.metrics).toMatchObject({ samplesUsed: 3, samplesDropped: 0, clipFraction: 0 });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('clawrl_training{metric="steps"} 1');
    expect(metrics).toMatch(/clawrl_training\{metric="last_step_loss"\} -?\d/);

    await admin('/admin/policies/0/activate', 'POST');
    expect((await chat('after-rollback')).version).toBe('0');
    const { stdout } = await promisify(execFile)(process.execPath, [cliPath, 'policy', 'activate', '1', '--url', server.url]);
    expect(stdout).toContain('serving policy version 1');
    expect((await chat('after-roll-forward')).version).toBe('1');
    // Without a gate (this server's default) each step's version is active at once; a person's activation says so.
    const states = (await admin<{ data: Array<Record<string, unknown>> }>('/admin/policies')).data;
    expect(states.map((entry) => [entry.version, entry.state, entry.stateReason])).toEqual([
      [0, 'retired', 'superseded by version 1'],
      [1, 'active', 'activated by a person'],
    ]);
    expect((await fetch(`${server.url}/admin/policies/7/activate`, { method: 'POST' })).status).toBe(404);

    await admin('/admin/training/pause', 'POST');
    expect((await fetch(`${server.url}/admin/training/step`, { method: 'POST' })).status).toBe(400);
    await admin('/admin/training/resume', 'POST');
  });

  it('resumes from the checkpoint after kill -9 during a step', async () => {
    await sessionsWithFeedback('second', 2);
    void fetch(`${server.url}/admin/training/step`, { method: 'POST' }).catch(() => undefined);
    await waitForOutput('training step started');
    await server.kill();

    server = await startClawrlServer(serverArguments(), { data: server.data });
    expect(server.stderr()).toContain('trainer resumed from its checkpoint');
    const status = await admin<Status>('/admin/status');
    // The step either committed before the kill or left no trace: its samples are ready again.
    if (status.trainSteps === 1) expect(status).toMatchObject({ policyVersion: 1, samples: { ready: 2, trained: 3 } });
    else expect(status).toMatchObject({ trainSteps: 2, policyVersion: 2, samples: { ready: 0, trained: 5 } });
    expect((await chat('after-restart')).version).toBe(String(status.policyVersion));

    await sessionsWithFeedback('third', 1);
    const outcome = await admin<{ kind: string; step: { step: number; policyVersion: number } }>('/admin/training/step', 'POST');
    expect(outcome).toMatchObject({ kind: 'trained', step: { step: status.trainSteps + 1, policyVersion: status.policyVersion + 1 } });
    const newest = (await admin<{ data: Array<{ version: number; parent: number | null; active: boolean }> }>('/admin/policies')).data.at(-1);
    expect(newest).toEqual(expect.objectContaining({ version: status.policyVersion + 1, parent: status.policyVersion, active: true }));
    expect((await chat('after-resumed-step')).version).toBe(String(status.policyVersion + 1));
  });
});

describe('full-parameter training with pinned sessions', () => {
  it('publishes full weights the sampler serves (two passes per step), while a pinned session keeps its first version', async () => {
    await server.stop();
    rmSync(server.data, { recursive: true, force: true });
    // Passes per step are a recipe setting, not a flag of serve.
    const recipe = path.join(folder, 'two-passes.json');
    writeFileSync(recipe, JSON.stringify({ trainEpochs: 2 }));
    server = await startClawrlServer([...serverArguments(), '--train-params', 'full', '--recipe', recipe, '--pin-sessions']);
    expect((await chat('pinned')).version).toBe('0');
    await sessionsWithFeedback('full', 2);
    const outcome = await admin<{ kind: string; step: { policyVersion: number } }>('/admin/training/step', 'POST');
    expect(outcome).toMatchObject({ kind: 'trained', step: { policyVersion: 1, metrics: { epochs: 2 } } });
    expect((await admin<{ data: Array<{ kind: string }> }>('/admin/policies')).data.map((entry) => entry.kind)).toEqual(['base', 'full']);
    expect((await chat('new-session')).version).toBe('1');
    expect((await chat('pinned')).version).toBe('0');
    await admin('/admin/policies/0/activate', 'POST');
    expect((await chat('another-new-session')).version).toBe('0');
  });
});
