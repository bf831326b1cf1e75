/**
 * Versions earn their users in distributed mode, on this machine's Postgres and NATS: the trainer
 * runs the version lifecycle, the gateways follow the store. With `--canary-share` on the trainer,
 * both gateways serve the candidate to the same cohort of sessions (the hash's) and the incumbent
 * to everyone else, and the canary watch rolls it back within 50 canary turns when that cohort's
 * feedback regresses, failing no request; then no gateway serves it. With `--gate replay` the
 * trainer replays held-out sessions (the judge process held them out of training) on its own gate
 * engine before the candidate serves anyone, and the gateways serve whatever the gate decided. On
 * vLLM/SGLang (the fake servers) the trainer loads the candidate's adapter for its gate, and no
 * user's request names it before promotion.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inSessionCohort } from '../src/core/session-cohort.js';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { startFakeVllmServer, type FakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { checkTestPostgresReachable } from '../src/stores/postgres/testing/test-postgres.js';
import { createDistributedDeployment, type ClawrlProcess, type DistributedDeployment } from './testing/distributed-deployment.js';
import { assertBuilt } from './testing/start-clawrl-server.js';
import { expectIncumbentBeforePromotion } from './testing/expect-incumbent-before-promotion.js';
import { pollUntil as until } from './testing/poll-until.js';
import { expectRolledBackCanary, type PolicyEntry } from './testing/expect-rolled-back-canary.js';

let folder: string;
let model: string;
let deployment: DistributedDeployment | undefined;
const temporary: string[] = [];

beforeAll(async () => {
  assertBuilt();
  await checkTestPostgresReachable();
  folder = createTinyModelFolder();
  model = path.basename(folder);
  temporary.push(folder);
});
afterEach(async () => {
  await deployment?.close();
  deployment = undefined;
});
afterAll(() => {
  for (const directory of temporary) rmSync(directory, { recursive: true, force: true });
});

function dataFolder(): string {
  const data = mkdtempSync(path.join(tmpdir(), 'clawrl-version-gate-'));
  temporary.push(data);
  return data;
}

/** A judge and `gatewayCount` gateways of one new deployment; its trainer starts when the test says. */
async function startDeployment(gatewayCount: number, judgeArguments: string[] = []): Promise<{ gateways: ClawrlProcess[]; startTrainer: (trainerArguments: string[]) => Promise<ClawrlProcess> }> {
  const started = createDistributedDeployment();
  deployment = started;
  const [, ...gateways] = await Promise.all([
    started.start('judge', ['--judge', 'rules', '--method', 'rl', ...judgeArguments]),
    ...Array.from({ length: gatewayCount }, (_, index) =>
      started.start('gateway', ['--engine', 'local', '--model', folder, '--max-tokens', '8', '--port', '0', '--instance', `gateway-${index}`, '--data', dataFolder()]),
    ),
  ]);
  return { gateways, startTrainer: (trainerArguments) => started.start('trainer', ['--model', folder, '--train-every', '3', '--data', dataFolder(), ...trainerArguments]) };
}

/** Waits until the judge built `count` ready samples: a trainer started then trains at once, on every session recorded before. */
async function readySamples(gateway: ClawrlProcess, count: number): Promise<void> {
  await until(() => admin<{ samples: { ready: number } }>(gateway, '/admin/status'), (status) => status.samples.ready >= count, 'ready samples');
}

async function admin<Body>(gateway: ClawrlProcess, route: string): Promise<Body> {
  const response = await fetch(`${gateway.url}${route}`);
  expect(response.status, route).toBe(200);
  return (await response.json()) as Body;
}

/** One chat turn through `gateway`; the status and the version that served it. `train: false` sends `X-Clawrl-Train: off`. */
async function chat(gateway: ClawrlProcess, sessionId: string, content: string, train = true): Promise<{ status: number; turnId: string; version: string | null }> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-id': sessionId, ...(train ? {} : { 'x-clawrl-train': 'off' }) },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }], temperature: 0.8 }),
  });
  await response.text();
  return { status: response.status, turnId: response.headers.get('x-clawrl-turn-id') ?? '', version: response.headers.get('x-clawrl-policy-version') };
}

async function thumbs(gateway: ClawrlProcess, turnId: string, up: boolean): Promise<void> {
  const response = await fetch(`${gateway.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ turn_id: turnId, thumbs: up ? 'up' : 'down' }) });
  expect(response.status).toBe(200);
}

describe('the canary in distributed mode', () => {
  it('routes one cohort on every gateway and rolls the candidate back within 50 canary turns when its feedback regresses, failing no request', async () => {
    const { gateways, startTrainer } = await startDeployment(2);
    await startTrainer(['--canary-share', '0.5', '--canary-min-scored', '5']);
    const [first, second] = gateways as [ClawrlProcess, ClawrlProcess];
    const policies = async () => (await admin<{ data: PolicyEntry[] }>(first, '/admin/policies')).data;
    // Three trainable turns (one per session, feedback through the other gateway): one training step.
    for (let index = 0; index < 3; index += 1) {
      const { turnId } = await chat(gateways[index % 2] as ClawrlProcess, `warm-${index}`, `hello ${index}`);
      await thumbs(gateways[(index + 1) % 2] as ClawrlProcess, turnId, index % 2 === 0);
    }
    await until(policies, (entries) => entries[1]?.state === 'canary', 'the canary to start', 900);
    expect((await policies()).map((entry) => [entry.version, entry.state, entry.active])).toEqual([[0, 'active', true], [1, 'canary', false]]);
    expect((await policies())[1]?.canary).toMatchObject({ share: 0.5, decision: 'watching' });
    const cohort = Array.from({ length: 50 }, (_, index) => `probe-${index}`).filter((id) => inSessionCohort('canary', id, 0.5));
    // Both gateways follow the store's canary: a cohort session is served the candidate on each.
    for (const [index, gateway] of gateways.entries()) {
      await until(() => chat(gateway, cohort[index] ?? 'probe', 'are you the candidate?', false), (reply) => reply.version === '1', `gateway ${index} to route the cohort`, 100);
    }

    let failed = 0;
    let canaryTurns = 0;
    for (let index = 0; index < 400 && (await policies())[1]?.state === 'canary'; index += 1) {
      const sessionId = `live-${index}`;
      const gateway = gateways[index % 2] as ClawrlProcess;
      // Train off: these turns feed the watch (feedback is kept) but never a new training step.
      const { status, turnId, version } = await chat(gateway, sessionId, `question ${index}`, false);
      if (status !== 200) {
        failed += 1;
        continue;
      }
      const inCohort = inSessionCohort('canary', sessionId, 0.5);
      // The watch may have rolled back since the loop looked: then the cohort is served the incumbent.
      if (inCohort && version === '0' && (await policies())[1]?.state !== 'canary') break;
      expect(version, `${sessionId} on gateway ${index % 2}`).toBe(inCohort ? '1' : '0');
      if (version === '1') canaryTurns += 1;
      // The test's users dislike the candidate and like the incumbent; their feedback arrives through the other gateway.
      await thumbs(gateways[(index + 1) % 2] as ClawrlProcess, turnId, version !== '1');
    }
    expectRolledBackCanary(await until(policies, (entries) => entries[1]?.state !== 'canary', 'the canary to end', 100), { failed, canaryTurns });
    // After the rollback no gateway serves the candidate, its cohort included.
    for (const [index, gateway] of gateways.entries()) {
      await until(() => chat(gateway, cohort[index] ?? 'probe', 'and now?', false), (reply) => reply.status === 200 && reply.version === '0', `gateway ${index} to stop routing`, 100);
    }
    expect(second.stderr()).toContain('canary routing ended');
  }, 240_000);
});

describe('the replay gate in distributed mode', () => {
  it("runs in the trainer on held-out sessions the judge process never let it train on, and the gateways serve the gate's decision", async () => {
    const { gateways, startTrainer } = await startDeployment(2, ['--gate', 'replay', '--held-out-share', '0.5']);
    const [first] = gateways as [ClawrlProcess, ClawrlProcess];
    const policies = async () => (await admin<{ data: PolicyEntry[] }>(first, '/admin/policies')).data;
    const sessions = Array.from({ length: 12 }, (_, index) => `recorded-${index}`);
    for (const [index, sessionId] of sessions.entries()) {
      const gateway = gateways[index % 2] as ClawrlProcess;
      const opening = await chat(gateway, sessionId, 'what is 2 + 3?');
      await chat(gateways[(index + 1) % 2] as ClawrlProcess, sessionId, 'thanks, that is right');
      await thumbs(gateway, opening.turnId, true);
    }
    const heldOut = sessions.filter((id) => inSessionCohort('held-out', id, 0.5));
    expect(heldOut.length).toBeGreaterThan(1);
    expect(heldOut.length).toBeLessThan(sessions.length);
    // Started once every session is recorded, so the gate has the held-out ones to replay.
    await readySamples(first, 3);
    await startTrainer(['--gate', 'replay', '--held-out-share', '0.5', '--gate-min-turns', '2', '--judge', 'rules', '--engine', 'local']);

    const [, candidate] = await until(policies, (entries) => entries[1] !== undefined && entries[1].state !== 'candidate', 'the gate to decide', 900);
    expect(['active', 'rejected', 'retired']).toContain(candidate?.state);
    expect(candidate?.gate).toMatchObject({ heldOut: true });
    expect(candidate?.gate?.turns).toBeGreaterThanOrEqual(2);
    for (const item of candidate?.gate?.items ?? []) expect(heldOut).toContain(item.sessionId);
    expect(candidate?.stateReason).toMatch(/replay gate/);
    // Every gateway serves the active version the gate left (the candidate's, or the incumbent's).
    for (const [index, gateway] of gateways.entries()) {
      await until(
        async () => ({ reply: await chat(gateway, `after-${index}`, 'after the gate', false), active: (await policies()).find((entry) => entry.active)?.version }),
        ({ reply, active }) => reply.version === String(active),
        `gateway ${index} to serve the active version`,
        100,
      );
    }
  }, 240_000);
});

describe.each(['vllm', 'sglang'] as const)('the replay gate of a distributed deployment on %s', (flavor) => {
  it("loads the candidate's adapter on the server for the trainer's gate and never sends a user's request to it before promotion", async () => {
    const adapterDirectory = dataFolder();
    const upstream: FakeVllmServer = await startFakeVllmServer({ mode: flavor, model: flavor === 'vllm' ? folder : model, autoToolChoice: true });
    try {
      const engine = ['--engine', flavor, '--upstream', upstream.url, '--model', folder, '--adapter-dir', adapterDirectory];
      const started = createDistributedDeployment();
      deployment = started;
      const [, gateway] = await Promise.all([
        started.start('judge', ['--judge', 'rules', '--method', 'rl', '--gate', 'replay', '--held-out-share', '0.5']),
        started.start('gateway', [...engine, '--port', '0', '--data', dataFolder()]),
      ]);
      if (gateway === undefined) throw new Error('no gateway');
      const policies = async () => (await admin<{ data: PolicyEntry[] }>(gateway, '/admin/policies')).data;
      for (let index = 0; index < 10; index += 1) {
        const first = await chat(gateway, `recorded-${index}`, 'what is 2 + 3?');
        await chat(gateway, `recorded-${index}`, 'thanks, that is right');
        await thumbs(gateway, first.turnId, true);
      }
      await readySamples(gateway, 2);
      const trainer = await started.start('trainer', [...engine, '--train-every', '2', '--lora-rank', '4', '--lora-alpha', '8', '--data', dataFolder(), '--gate', 'replay', '--held-out-share', '0.5', '--gate-min-turns', '2', '--judge', 'rules']);
      // Users keep asking while the trainer's gate runs: each is served the incumbent, unless the candidate was promoted by then.
      let decided: PolicyEntry | undefined;
      let servedCandidate = 0;
      for (let index = 0; index < 900 && decided === undefined; index += 1) {
        const { status, version } = await chat(gateway, `user-${index}`, 'hello', false);
        expect(status).toBe(200);
        const candidate = (await policies())[1];
        if (expectIncumbentBeforePromotion(version, candidate)) servedCandidate += 1;
        if (candidate !== undefined && candidate.state !== 'candidate') decided = candidate;
      }
      const name = [...upstream.adapters.keys()].find((adapter) => adapter.includes('-v1-'));
      expect(name, 'the candidate adapter is loaded on the upstream').toBeDefined();
      // Before the promotion only the gate asked for it: one answer per replayed turn.
      const askedForCandidate = upstream.requests.filter((request) => request.served === name).length;
      expect(decided?.gate?.turns, trainer.stderr()).toBeGreaterThanOrEqual(2);
      expect(askedForCandidate - servedCandidate).toBe(decided?.gate?.turns ?? -1);
    } finally {
      await deployment?.close();
      deployment = undefined;
      await upstream.close();
    }
  }, 240_000);
});
