/**
 * Distributed mode on this machine's Postgres and NATS: two `clawrl gateway` processes, one
 * `clawrl judge` and one `clawrl trainer`, each loading its own copy of a tiny local model.
 * Sessions alternate between the gateways (by X-Session-Id, and one stitched header-free across
 * both). Under continuous traffic the trainer and then a gateway are killed with SIGKILL and
 * restarted: every acknowledged turn is in the store afterwards, training resumes, and both
 * gateways serve the newest policy version.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectToTestNats } from '../src/buses/nats/testing/nats-test-server.js';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { checkTestPostgresReachable } from '../src/stores/postgres/testing/test-postgres.js';
import { createDistributedDeployment, type ClawrlProcess } from './testing/distributed-deployment.js';
import { assertBuilt } from './testing/start-clawrl-server.js';

interface Reply {
  turnId: string;
  sessionId: string | undefined;
  version: number;
  content: string;
}

interface Status {
  trainSteps: number;
  policyVersion: number;
  samples: { ready: number; trained: number };
}

const deployment = createDistributedDeployment();
const busPrefix = deployment.busPrefix;
const temporary: string[] = [];
let folder: string;
let model: string;
let trainerData: string;
const gateways: ClawrlProcess[] = [];
let judge: ClawrlProcess;
let trainer: ClawrlProcess;
/** Every turn a gateway acknowledged with a complete response, and what it said about it. */
const acknowledged = new Map<string, Reply>();

const startProcess = (command: 'gateway' | 'judge' | 'trainer', argumentsList: string[]) => deployment.start(command, argumentsList);

function startGateway(instance: string): Promise<ClawrlProcess> {
  const data = mkdtempSync(path.join(tmpdir(), 'clawrl-gateway-'));
  temporary.push(data);
  return startProcess('gateway', ['--engine', 'local', '--model', folder, '--max-tokens', '8', '--port', '0', '--instance', instance, '--data', data]);
}

function startTrainer(): Promise<ClawrlProcess> {
  return startProcess('trainer', ['--model', folder, '--train-every', '3', '--data', trainerData]);
}

/** One completion; null when the gateway did not acknowledge it (refused, dead or killed mid-response). */
async function chat(gateway: ClawrlProcess, messages: Array<{ role: string; content: string }>, sessionId?: string): Promise<Reply | null> {
  try {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(sessionId === undefined ? {} : { 'x-session-id': sessionId }) },
      body: JSON.stringify({ model, messages, temperature: 0.8 }),
    });
    if (response.status !== 200) return null;
    const body = (await response.json()) as { choices: Array<{ message: { content: string | null } }> };
    const reply = {
      turnId: response.headers.get('x-clawrl-turn-id') ?? '',
      sessionId,
      version: Number(response.headers.get('x-clawrl-policy-version')),
      content: body.choices[0]?.message.content ?? '',
    };
    acknowledged.set(reply.turnId, reply);
    return reply;
  } catch {
    return null;
  }
}

async function feedback(gateway: ClawrlProcess, turnId: string, thumbs: 'up' | 'down'): Promise<void> {
  await fetch(`${gateway.url}/v1/feedback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ turn_id: turnId, thumbs }),
  }).catch(() => undefined);
}

async function admin<Body>(route: string): Promise<Body> {
  const response = await fetch(`${gateways[0]?.url}${route}`);
  expect(response.status, route).toBe(200);
  return (await response.json()) as Body;
}

/** A session of two turns on alternating gateways; each turn gets feedback through the other one. */
async function conversation(index: number): Promise<void> {
  const sessionId = `load-${index}`;
  const first = gateways[index % 2];
  const second = gateways[(index + 1) % 2];
  if (first === undefined || second === undefined) return;
  const question = { role: 'user', content: `question ${index}` };
  const opening = await chat(first, [question], sessionId);
  if (opening === null) return;
  await feedback(second, opening.turnId, index % 3 === 0 ? 'down' : 'up');
  const reply = await chat(second, [question, { role: 'assistant', content: opening.content }, { role: 'user', content: `thanks ${index}` }], sessionId);
  if (reply !== null) await feedback(first, reply.turnId, index % 2 === 0 ? 'up' : 'down');
}

async function waitFor(description: string, condition: () => Promise<boolean> | boolean): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${description}`);
}

beforeAll(async () => {
  assertBuilt();
  await checkTestPostgresReachable();
  folder = createTinyModelFolder();
  model = path.basename(folder);
  trainerData = mkdtempSync(path.join(tmpdir(), 'clawrl-trainer-'));
  temporary.push(folder, trainerData);
  // Started together on purpose: migrations and the base version must survive the race.
  const [startedTrainer, startedJudge, ...startedGateways] = await Promise.all([
    startTrainer(),
    startProcess('judge', ['--judge', 'rules', '--method', 'rl']),
    startGateway('gateway-0'),
    startGateway('gateway-1'),
  ]);
  trainer = startedTrainer;
  judge = startedJudge;
  gateways.push(...startedGateways);
}, 60_000);

afterAll(async () => {
  await deployment.close();
  for (const directory of temporary) rmSync(directory, { recursive: true, force: true });
});

describe('distributed mode: gateways, a judge and a trainer over Postgres and NATS', () => {
  it('serves one session from both gateways, with and without a session header', async () => {
    const [a, b] = gateways as [ClawrlProcess, ClawrlProcess];
    const question = { role: 'user', content: 'where do I start?' };
    const first = await chat(a, [question], 'shared');
    expect(first).not.toBeNull();
    const second = await chat(b, [question, { role: 'assistant', content: first?.content ?? '' }, { role: 'user', content: 'and then?' }], 'shared');
    expect(second).not.toBeNull();
    const sessions = await admin<{ data: Array<{ id: string; turnIds: string[] }> }>('/admin/sessions');
    expect(sessions.data.find((session) => session.id === 'shared')?.turnIds).toEqual([first?.turnId, second?.turnId]);

    const system = { role: 'system', content: 'You help with a header-free conversation.' };
    const opening = await chat(a, [system, { role: 'user', content: 'hello' }]);
    const continued = await chat(b, [system, { role: 'user', content: 'hello' }, { role: 'assistant', content: opening?.content ?? '' }, { role: 'user', content: 'more' }]);
    const [openingTurn, continuedTurn] = await Promise.all([
      admin<{ sessionId: string; nextState: unknown }>(`/admin/turns/${opening?.turnId}`),
      admin<{ sessionId: string }>(`/admin/turns/${continued?.turnId}`),
    ]);
    expect(continuedTurn.sessionId).toBe(openingTurn.sessionId);
    expect(openingTurn.nextState).toEqual([{ role: 'user', content: 'more' }]);
  });

  it('loses no acknowledged turn through kill -9 of the trainer and of a gateway, resumes training and serves the new version everywhere', async () => {
    let next = 0;
    let traffic = true;
    const load = (async () => {
      while (traffic) await conversation(next++);
    })();

    await waitFor('a committed training step', () => trainer.stderr().includes('training step committed'));
    await trainer.kill();
    const stepsBeforeRestart = (await admin<Status>('/admin/status')).trainSteps;
    trainer = await startTrainer();
    await waitFor('the restarted trainer to resume', () => trainer.stderr().includes('trainer resumed from its checkpoint') || trainer.stderr().includes('continuing from'));

    const conversationsBeforeGatewayKill = next;
    await waitFor('traffic through the restarted trainer', () => next >= conversationsBeforeGatewayKill + 2);
    await gateways[1]?.kill();
    const conversationsWhileDown = next;
    await waitFor('traffic while a gateway is down', () => next >= conversationsWhileDown + 2);
    gateways[1] = await startGateway('gateway-1');
    // A version published after the gateway's restart, which it can only learn from the bus or the store.
    const stepsAtGatewayRestart = Math.max(stepsBeforeRestart + 1, (await admin<Status>('/admin/status')).trainSteps);
    await waitFor('training after both restarts', async () => (await admin<Status>('/admin/status')).trainSteps > stepsAtGatewayRestart);
    traffic = false;
    await load;

    // Every acknowledged turn is stored as it was served.
    expect(acknowledged.size).toBeGreaterThan(10);
    for (const [turnId, reply] of acknowledged) {
      const turn = await admin<{ id: string; sessionId: string; policyVersion: number; responseTokenIds: number[] }>(`/admin/turns/${turnId}`);
      expect(turn.policyVersion).toBe(reply.version);
      if (reply.sessionId !== undefined) expect(turn.sessionId).toBe(reply.sessionId);
    }
    expect(new Set([...acknowledged.values()].map((reply) => reply.version)).size).toBeGreaterThan(1);

    // Both gateways follow the trainer: each serves the active version (read afresh, in case a last step lands meanwhile).
    const finalStatus = await admin<Status>('/admin/status');
    expect(finalStatus.policyVersion).toBeGreaterThan(stepsBeforeRestart);
    let probe = 0;
    for (const gateway of gateways) {
      await waitFor(`gateway ${gateway.url} to serve the active version`, async () => {
        const reply = await chat(gateway, [{ role: 'user', content: `probe ${probe}` }], `probe-${probe++}`);
        return reply !== null && reply.version === (await admin<Status>('/admin/status')).policyVersion;
      });
    }
    expect(judge.stderr()).not.toContain('claiming turns for judging failed');

    // Every arrow was an event on this run's own stream. Events are best effort: the killed gateway
    // may die after acknowledging a turn and before its event leaves, and the trainer is killed as soon
    // as it logs a committed step, which can be before that step's event leaves; hence the allowances.
    const nats = await connectToTestNats();
    try {
      const subjects = (await nats.manager.streams.info(busPrefix, { subjects_filter: '>' })).state.subjects ?? {};
      expect(subjects[`${busPrefix}.turn.recorded`]).toBeGreaterThanOrEqual(acknowledged.size - 2);
      expect(subjects[`${busPrefix}.sample.available`]).toBeGreaterThan(0);
      expect(subjects[`${busPrefix}.turn.scored`]).toBeGreaterThan(0);
      expect(subjects[`${busPrefix}.policy.published`]).toBeGreaterThanOrEqual(finalStatus.policyVersion - 1);
    } finally {
      await nats.connection.close();
    }
  });
});
