/**
 * Versions earn their users, in `clawrl serve --engine local`: a committed version waits as a
 * candidate, the canary serves it to a share of sessions and rolls it back when their feedback
 * regresses (no request fails; the others never see it), and the replay gate judges a candidate on
 * held-out sessions whose turns were never trained on, as `clawrl eval replay` does by hand.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inSessionCohort } from '../src/core/session-cohort.js';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { cliPath, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';
import { pollUntil as until } from './testing/poll-until.js';
import { expectRolledBackCanary, type PolicyEntry } from './testing/expect-rolled-back-canary.js';

let folder: string;
let model: string;
let server: ClawrlServer | undefined;
const baseArguments = () => ['--engine', 'local', '--model', folder, '--judge', 'rules', '--method', 'rl', '--train-every', '1000', '--max-tokens', '8'];

async function admin<Body>(route: string, method: 'GET' | 'POST' = 'GET'): Promise<Body> {
  const response = await fetch(`${server?.url}${route}`, { method });
  expect(response.status, `${method} ${route}: ${response.status === 200 ? '' : await response.clone().text()}`).toBe(200);
  return (await response.json()) as Body;
}

const policies = async () => (await admin<{ data: PolicyEntry[] }>('/admin/policies')).data;

/** One chat turn; the status and the version that served it. */
async function chat(sessionId: string, content: string): Promise<{ status: number; turnId: string; version: string | null }> {
  const response = await fetch(`${server?.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-id': sessionId },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }], temperature: 0.8 }),
  });
  await response.text();
  return { status: response.status, turnId: response.headers.get('x-clawrl-turn-id') ?? '', version: response.headers.get('x-clawrl-policy-version') };
}

async function thumbs(turnId: string, up: boolean): Promise<void> {
  const response = await fetch(`${server?.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ turn_id: turnId, thumbs: up ? 'up' : 'down' }) });
  expect(response.status).toBe(200);
}

/** Sessions of one turn with feedback, until `ready` samples are built. */
async function trainableSamples(prefix: string, count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const { turnId } = await chat(`${prefix}-${index}`, `hello ${index}`);
    await thumbs(turnId, index % 2 === 0);
  }
  await until(() => admin<{ samples: { ready: number } }>('/admin/status'), (status) => status.samples.ready >= count, 'samples');
}

beforeAll(() => {
  folder = createTinyModelFolder();
  model = path.basename(folder);
});
afterAll(async () => {
  await server?.stop();
  if (server !== undefined) rmSync(server.data, { recursive: true, force: true });
  rmSync(folder, { recursive: true, force: true });
});

describe('the canary', () => {
  it('serves the candidate to its cohort alone and rolls it back within 50 canary turns when their feedback regresses, failing no request', async () => {
    server = await startClawrlServer([...baseArguments(), '--canary-share', '0.5', '--canary-min-scored', '5']);
    await trainableSamples('warm', 3);
    expect(await admin<{ kind: string }>('/admin/training/step', 'POST')).toMatchObject({ kind: 'trained' });
    await until(policies, (entries) => entries[1]?.state === 'canary', 'the canary to start');
    expect((await policies()).map((entry) => [entry.version, entry.state, entry.active])).toEqual([[0, 'active', true], [1, 'canary', false]]);
    // The server's policy follower checks the store every 15 s: it must leave the candidate in its canary.
    await new Promise((resolve) => setTimeout(resolve, 16_000));
    expect((await policies()).map((entry) => entry.state)).toEqual(['active', 'canary']);

    let failed = 0;
    let canaryTurns = 0;
    for (let index = 0; index < 400 && (await policies())[1]?.state === 'canary'; index += 1) {
      const sessionId = `live-${index}`;
      const { status, turnId, version } = await chat(sessionId, `question ${index}`);
      if (status !== 200) {
        failed += 1;
        continue;
      }
      // The cohort is the hash's: a session outside it is never served the candidate. The watch
      // rolls back on the feedback of an earlier turn, so the canary may have ended since the loop
      // looked: then a cohort session is served the incumbent, and the loop is over.
      const inCohort = inSessionCohort('canary', sessionId, 0.5);
      if (inCohort && version === '0' && (await policies())[1]?.state !== 'canary') break;
      expect(version, sessionId).toBe(inCohort ? '1' : '0');
      if (version === '1') canaryTurns += 1;
      // The test's users dislike the candidate and like the incumbent.
      await thumbs(turnId, version !== '1');
    }
    expectRolledBackCanary(await until(policies, (entries) => entries[1]?.state !== 'canary', 'the canary to end', 100), { failed, canaryTurns });
    // After the rollback everyone is served the incumbent, the cohort included.
    const cohortSession = Array.from({ length: 50 }, (_, index) => `after-${index}`).find((id) => inSessionCohort('canary', id, 0.5)) ?? 'after-0';
    expect((await chat(cohortSession, 'after the rollback')).version).toBe('0');
    const listed = await promisify(execFile)(process.execPath, [cliPath, 'policy', 'list', '--url', server.url]);
    expect(listed.stdout).toMatch(/1\s+rolled-back/);
    await server.stop();
    rmSync(server.data, { recursive: true, force: true });
    server = undefined;
  }, 180_000);
});

describe('the replay gate', () => {
  it('judges the candidate on held-out sessions it never trained on, records the evidence, and eval replay runs it by hand', async () => {
    server = await startClawrlServer([...baseArguments(), '--gate', 'replay', '--held-out-share', '0.5', '--gate-min-turns', '2']);
    const sessions = Array.from({ length: 12 }, (_, index) => `recorded-${index}`);
    for (const sessionId of sessions) {
      const first = await chat(sessionId, 'what is 2 + 3?');
      await chat(sessionId, 'thanks, that is right');
      await thumbs(first.turnId, true);
    }
    const heldOut = sessions.filter((id) => inSessionCohort('held-out', id, 0.5));
    expect(heldOut.length).toBeGreaterThan(1);
    expect(heldOut.length).toBeLessThan(sessions.length);
    await until(() => admin<{ samples: { ready: number; dropped: number } }>('/admin/status'), (status) => status.samples.ready >= sessions.length - heldOut.length, 'samples');
    // A held-out session's turns are judged but their samples are dropped as held out.
    const listed = (await admin<{ data: Array<{ id: string; turnIds: string[] }> }>('/admin/sessions?limit=100')).data;
    const turnOf = (sessionId: string) => listed.find((session) => session.id === sessionId)?.turnIds[0] ?? '';
    const sampleOf = (turnId: string) =>
      until(() => admin<{ samples: Array<{ status: string; dropReason: string | null }> }>(`/admin/turns/${turnId}`), (read) => read.samples.length > 0, 'a sample');
    expect((await sampleOf(turnOf(heldOut[0] ?? ''))).samples[0]).toMatchObject({ status: 'dropped', dropReason: 'held-out' });
    const trained = sessions.find((id) => !heldOut.includes(id)) ?? '';
    expect((await sampleOf(turnOf(trained))).samples[0]).toMatchObject({ status: 'ready' });

    expect(await admin<{ kind: string }>('/admin/training/step', 'POST')).toMatchObject({ kind: 'trained' });
    const [, candidate] = await until(policies, (entries) => entries[1] !== undefined && entries[1].state !== 'candidate', 'the gate to decide');
    expect(['active', 'rejected']).toContain(candidate?.state);
    expect(candidate?.gate).toMatchObject({ heldOut: true });
    expect(candidate?.gate?.turns).toBeGreaterThanOrEqual(2);
    for (const item of candidate?.gate?.items ?? []) expect(heldOut).toContain(item.sessionId);
    expect(candidate?.stateReason).toMatch(/replay gate/);

    const { stdout } = await promisify(execFile)(process.execPath, [cliPath, 'eval', 'replay', '--version', '1', '--against', '0', '--sessions', '3', '--json', '--url', server.url]);
    const evidence = JSON.parse(stdout) as { candidate: number; incumbent: number; decision: string; sessions: number; rule: string };
    expect(evidence).toMatchObject({ candidate: 1, incumbent: 0 });
    expect(evidence.sessions).toBeLessThanOrEqual(3);
    expect(evidence.rule).toContain('sign test');
  });
});
