/**
 * The manager/worker loop over this machine's NATS, against a real `clawrl serve` on the built-in
 * model: a manager publishes six arithmetic tasks, two workers take them. Worker A's rollout
 * requests go through a proxy that holds them, so A is mid-task for certain when it is killed
 * with SIGKILL; its task goes to worker B after the ack wait. The manager is killed with SIGKILL
 * after its first appraisal and started again with the same flags: it publishes nothing twice and
 * appraises the rest. In the end every task has exactly one appraisal in the server's store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectToTestNats, testNatsUrl, uniqueTestName } from '../src/buses/nats/testing/nats-test-server.js';
import { runCli } from './testing/run-cli.js';
import { assertBuilt, cliPath, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

interface CliProcess {
  child: ChildProcess;
  lines: string[];
  stderr(): string;
  /** Resolves with the first stdout line that matches. */
  waitForLine(pattern: RegExp, what: string): Promise<string>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

const prefix = uniqueTestName('clawrl_e2e_mw');
const run = 'e2e-run';
const taskCount = 6;
const children = new Set<CliProcess>();
let server: ClawrlServer;
let proxy: Server;
let proxyUrl: string;
/** The X-Session-Id of each completion request the proxy holds. */
const heldSessions: string[] = [];
let heldRequest: () => void = () => undefined;
const requestHeld = new Promise<void>((resolve) => (heldRequest = resolve));

function startCli(argumentsList: string[]): CliProcess {
  const child = spawn(process.execPath, [cliPath, ...argumentsList], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let errors = '';
  let pending = '';
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  child.stdout?.on('data', (part: Buffer) => {
    pending += part.toString('utf8');
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const line of complete) {
      lines.push(line);
      for (const waiter of waiters.filter((candidate) => candidate.pattern.test(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  child.stderr?.on('data', (part: Buffer) => {
    errors += part.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started: CliProcess = {
    child,
    lines,
    stderr: () => errors,
    waitForLine(pattern, what) {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve });
        void exited.then(() => reject(new Error(`${argumentsList[0]} exited before ${what}:\n${errors}`)));
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      children.delete(started);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      children.delete(started);
    },
  };
  children.add(started);
  return started;
}

function busArguments(): string[] {
  return ['--bus', 'nats', '--bus-url', testNatsUrl, '--bus-prefix', prefix, '--env', 'arithmetic', '--ack-wait', '3', '--json'];
}

function startManager(): CliProcess {
  return startCli(['manager', ...busArguments(), '--url', server.url, '--tasks', String(taskCount), '--run', run]);
}

/** Forwards everything to the server except completions, which it holds until the client goes away. */
async function startHoldingProxy(target: string): Promise<void> {
  proxy = createServer((request: IncomingMessage, response) => {
    if (request.url?.endsWith('/chat/completions')) {
      heldSessions.push(String(request.headers['x-session-id']));
      heldRequest();
      return;
    }
    void (async () => {
      const forwarded = await fetch(new URL(request.url ?? '/', target), { method: request.method ?? 'GET', headers: { authorization: String(request.headers.authorization ?? '') } });
      response.writeHead(forwarded.status, { 'content-type': forwarded.headers.get('content-type') ?? 'application/json' });
      response.end(Buffer.from(await forwarded.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

async function admin<T>(route: string): Promise<T> {
  const response = await fetch(new URL(route, server.url));
  expect(response.status, route).toBe(200);
  return (await response.json()) as T;
}

interface FeedbackRecord {
  score: number | null;
  rollout: { runId: string; environment: string; group: string | null; outcomeReward: number; reward: number } | null;
}

const feedbackSeen: FeedbackRecord[] = [];

/** Feedback records per task of the run, read from the server's store through the admin routes. */
async function feedbackByTask(): Promise<Map<string, number>> {
  feedbackSeen.length = 0;
  const sessions = await admin<{ data: { id: string; turnIds: string[] }[] }>('/admin/sessions?limit=1000');
  const counts = new Map<string, number>();
  for (const session of sessions.data.filter((candidate) => candidate.id.startsWith(`${run}-`))) {
    const taskId = session.id.slice(run.length + 1).replace(/-[0-9a-f]{8}$/, '');
    for (const turnId of session.turnIds) {
      const turn = await admin<{ feedback: FeedbackRecord[] }>(`/admin/turns/${turnId}`);
      feedbackSeen.push(...turn.feedback);
      counts.set(taskId, (counts.get(taskId) ?? 0) + turn.feedback.length);
    }
  }
  return counts;
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

beforeAll(async () => {
  assertBuilt();
  // Fails here, not later, when NATS is not running.
  await (await connectToTestNats()).connection.close();
  server = await startClawrlServer(['--no-train', '--judge', 'rules']);
  await startHoldingProxy(server.url);
}, 60_000);

afterAll(async () => {
  for (const child of [...children]) await child.kill();
  await server?.stop();
  await new Promise((resolve) => proxy?.close(resolve));
  const admin = await connectToTestNats();
  for await (const name of admin.manager.streams.names()) {
    if (name.startsWith(`${prefix}-queue-`)) await admin.manager.streams.delete(name).catch(() => false);
  }
  await admin.connection.close();
});

describe('clawrl manager and clawrl worker over NATS', () => {
  it('loses no task to a killed worker and no result to a killed manager, and appraises each task once', async () => {
    const firstManager = startManager();
    const ready = JSON.parse(await firstManager.waitForLine(/"ready":"manager"/, 'its ready line')) as Record<string, unknown>;
    expect(ready).toMatchObject({ run, environment: 'arithmetic', tasks: taskCount, published: taskCount, duplicates: 0 });

    // Worker A solves through the holding proxy: once a request is held, A is mid-task.
    const workerA = startCli(['worker', ...busArguments(), '--url', proxyUrl, '--instance', 'worker-a']);
    await requestHeld;
    await workerA.kill();
    const abandonedSession = heldSessions[0] as string;
    const abandonedTask = abandonedSession.slice(run.length + 1).replace(/-[0-9a-f]{8}$/, '');

    const workerB = startCli(['worker', ...busArguments(), '--url', server.url, '--instance', 'worker-b']);
    await workerB.waitForLine(/"ready":"worker"/, 'its ready line');
    await firstManager.waitForLine(/"feedbackId"/, 'its first appraisal');
    await firstManager.kill();

    const secondManager = startManager();
    const again = JSON.parse(await secondManager.waitForLine(/"ready":"manager"/, 'its ready line')) as Record<string, unknown>;
    expect(again).toMatchObject({ run, published: 0, duplicates: taskCount });

    await until(async () => (await feedbackByTask()).size === taskCount, 'an appraisal of every task', 180_000);
    // Past another ack wait, nothing was appraised twice by a redelivery.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const counts = await feedbackByTask();
    expect([...counts.values()]).toEqual(Array.from({ length: taskCount }, () => 1));
    expect(counts.get(abandonedTask)).toBe(1);
    // The verifier's outcome reward, posted as a rollout's reward (no score, no group: each task is
    // solved once), so the turn's sample says where its reward came from.
    for (const feedback of feedbackSeen) {
      expect(feedback.rollout).toMatchObject({ runId: run, environment: 'arithmetic', group: null });
      expect(feedback.score).toBeNull();
      expect(feedback.rollout?.reward).toBe(feedback.rollout?.outcomeReward);
    }

    const appraisals = [...firstManager.lines, ...secondManager.lines].filter((line) => line.includes('"feedbackId"')).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(new Set(appraisals.map((appraisal) => appraisal['taskId'])).size).toBe(appraisals.length);
    expect(secondManager.lines.some((line) => line.includes('"feedbackId"'))).toBe(true);
    // The abandoned task was solved again by worker B, in a session of its own.
    const results = workerB.lines.filter((line) => line.includes('"sessionId"')).map((line) => JSON.parse(line) as { task: { id: string }; sessionId: string; worker: string });
    const redone = results.find((result) => result.task.id === abandonedTask);
    expect(redone?.worker).toBe('worker-worker-b');
    expect(redone?.sessionId).not.toBe(abandonedSession);
    expect(workerB.stderr()).toMatch(new RegExp(`worker took task .*task=${abandonedTask} redelivery=[1-9]`));
    await Promise.all([secondManager.stop(), workerB.stop()]);
  }, 300_000);

  it('says what is wrong in one line and exits non-zero when it cannot start', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['worker', '--bus', 'nats', '--bus-url', testNatsUrl, '--url', server.url], /--env <environment>/],
      [['worker', '--env', 'arithmetic', '--url', server.url], /needs --bus nats/],
      [['manager', '--env', 'arithmetic', '--url', server.url], /--workers <n>/],
      [['manager', '--env', 'no-such-env', '--bus', 'nats', '--bus-url', testNatsUrl, '--url', server.url], /Unknown environment 'no-such-env'/],
      [['worker', '--env', 'arithmetic', '--bus', 'nats', '--bus-url', testNatsUrl, '--url', 'http://127.0.0.1:9'], /Cannot reach clawrl at http:\/\/127\.0\.0\.1:9/],
      [['manager', '--env', 'arithmetic', '--bus', 'nats', '--bus-url', 'nats://127.0.0.1:9', '--url', server.url], /cannot reach NATS at nats:\/\/127\.0\.0\.1:9/],
      [['manager', '--env', 'arithmetic', '--bus', 'nats', '--bus-url', testNatsUrl, '--url', server.url, '--judge', 'policy'], /--judge/],
    ];
    for (const [argumentsList, pattern] of cases) {
      const { code, stderr } = await runCli(argumentsList);
      const failures = stderr.split('\n').filter((line) => line.startsWith('clawrl: '));
      expect(code, stderr).not.toBe(0);
      expect(code, stderr).not.toBeNull();
      expect(failures, stderr).toHaveLength(1);
      expect(failures[0]).toMatch(pattern);
      expect(stderr).not.toMatch(/^\s+at /m);
    }
  }, 120_000);
});
