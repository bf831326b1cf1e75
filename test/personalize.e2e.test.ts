/**
 * `clawrl eval personalize` end to end: the command starts its own `clawrl serve` (the tiny
 * random model, the rules judge), drives a short run over HTTP and writes its result and chart.
 * A random model learns nothing in three sessions, so this checks the shape and that the
 * result agrees with what the server recorded, never that learning succeeds.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSimulatedUser, type SimulatedUser } from '../src/builtin/user-preference.js';
import type { TurnRecord } from '../src/spec/records.js';
import { answeringText, userComplaints } from '../src/lab/personalize/experiment-plan.js';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { personalizeResultSchema, type PersonalizeResult } from '../src/lab/personalize/personalize-result.js';
import { consecutiveCriterion, sessionsToSuccess } from '../src/lab/personalize/success-criteria.js';
import { createSqliteRecordStore } from '../src/stores/sqlite/create-sqlite-record-store.js';
import { runCli } from './testing/run-cli.js';
import { assertBuilt } from './testing/start-clawrl-server.js';

const user: SimulatedUser = {
  name: 'brief-grader',
  task: 'grade',
  preference: { description: 'Grading in at most six words.', rules: [{ type: 'maxWords', value: 6 }] },
  complaints: ['No, that is far too long, redo it.'],
  thanks: ['Thanks, perfect.'],
  hint: 'Use at most six words.',
};

/** What the user makes of a recorded turn, as the experiment judged it. */
function verdictOn(turn: TurnRecord | null): { satisfied: boolean; replies: readonly string[] } {
  const answering = answeringText(turn?.messages ?? []);
  const { complaints } = userComplaints(user, { text: turn?.response.content ?? '', finishReason: turn?.finishReason ?? null, answering });
  return { satisfied: complaints.length === 0, replies: complaints.length === 0 ? user.thanks : complaints };
}

let folder: string;
let work: string;

beforeAll(() => {
  assertBuilt();
  folder = createTinyModelFolder();
  work = mkdtempSync(path.join(tmpdir(), 'clawrl-personalize-e2e-'));
});
afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

describe('clawrl eval personalize', () => {
  it('runs sessions and probes against a server it starts and reports what the server recorded', async () => {
    expect(parseSimulatedUser(user).ok).toBe(true);
    const userFile = path.join(work, 'user.json');
    writeFileSync(userFile, JSON.stringify(user));
    const out = path.join(work, 'out');
    const data = path.join(work, 'data');
    const run = await runCli([
      'eval', 'personalize', '--user', userFile, '--method', 'rl', '--sessions', '3', '--seed', '5', '--probe-size', '4',
      '--json', '--out', out, '--data', data, '--engine', 'local', '--model', folder, '--judge', 'rules', '--max-tokens', '12',
      '--final-feedback',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const result: PersonalizeResult = personalizeResultSchema.parse(JSON.parse(run.stdout));
    expect(result).toMatchObject({ user: 'brief-grader', method: 'rl', seed: 5, probeSize: 4, model: path.basename(folder), finalFeedback: true });
    // The file says how the server it started was set up, the experiment's own defaults included.
    expect(result.serverArguments).toEqual(expect.arrayContaining(['--method', 'rl', '--judge', 'rules', '--train-every', '4', '--recipe', path.join(data, 'experiment-recipe.json')]));
    // The experiment's own knobs reach the server in the recipe it wrote, not as flags of serve.
    expect(JSON.parse(readFileSync(path.join(data, 'experiment-recipe.json'), 'utf8'))).toMatchObject({ opdSupportK: 4, rewardBaseline: 'batch', anchorCoefficient: 0 });
    expect(run.stderr).toMatch(/session 3\/3 {2}first response \(policy v\d+\)/);

    expect(result.sessions.map((session) => session.index)).toEqual([1, 2, 3]);
    expect(new Set(result.sessions.map((session) => session.sessionId)).size).toBe(3);
    expect(result.probe[0]?.afterSession).toBe(0);
    expect(result.baseProbeRate).toBe(result.probe[0]?.satisfactionRate);
    for (const [index, probe] of result.probe.entries()) {
      expect(probe.satisfactionRate).toBe(probe.satisfied / probe.size);
      expect(probe.afterSession).toBeGreaterThanOrEqual(index === 0 ? 0 : (result.probe[index - 1]?.afterSession ?? 0) + 1);
      expect(probe.afterSession).toBeLessThanOrEqual(3);
    }
    expect(result.sessionsToSuccess).toBe(sessionsToSuccess(result.probe));
    expect(result.consecutiveCriterion).toBe(consecutiveCriterion(result.sessions));
    if (result.judge !== null) expect(result.judge.judge).toBe('rules');
    // The experiment names no sampling: the server took the test folder's generation_config.json.
    expect(result.sampling).toEqual({ temperature: 0.7, topP: 0.8, topK: 20 });

    // The files --out wrote.
    expect(JSON.parse(readFileSync(path.join(out, 'personalize-brief-grader-rl-seed5.json'), 'utf8'))).toEqual(result);
    expect(readFileSync(path.join(out, 'satisfaction.svg'), 'utf8').match(/<polyline /g)).toHaveLength(1);
    expect(existsSync(path.join(data, 'server.log'))).toBe(true);
    expect(readFileSync(path.join(out, 'summary.md'), 'utf8')).toContain('| brief-grader | rl | 5 |');

    // What the server recorded agrees with the result.
    const store = createSqliteRecordStore({ path: path.join(data, 'clawrl.db') });
    try {
      for (const session of result.sessions) {
        expect([2, 3]).toContain(session.turnIds.length);
        expect((await store.getSession(session.sessionId))?.status).toBe('closed');
        const first = await store.getTurn(session.turnIds[0] ?? '');
        expect(first).toMatchObject({ sessionId: session.sessionId, type: 'main', policyVersion: session.policyVersion });
        const verdict = verdictOn(first);
        expect(verdict.satisfied).toBe(session.firstResponseSatisfied);
        const reply = first?.nextState?.map((message) => message.content).join('\n');
        expect(verdict.replies).toContain(reply);
        // --final-feedback: the reply to the last response came as feedback text, and the judge read it.
        const lastId = session.turnIds.at(-1) ?? '';
        const last = await store.getTurn(lastId);
        expect(last?.nextState).toBeNull();
        const feedback = await store.getFeedback(lastId);
        expect(feedback).toMatchObject({ score: null, hint: null });
        expect(verdictOn(last).replies).toContain(feedback?.text);
        const judgements = await store.listJudgements(lastId);
        expect(judgements.length).toBeGreaterThan(0);
        expect(judgements.at(-1)?.score).not.toBeNull();
      }
      const counts = await store.counts();
      expect(counts.turns.main).toBe(result.sessions.reduce((sum, session) => sum + session.turnIds.length, 0));
      // Probe requests are side turns: recorded, never judged or trained.
      expect(counts.turns.side).toBeGreaterThanOrEqual(result.probe.length * 4);
    } finally {
      await store.close();
    }
  });

  it('measures the untrained base with --method base: the server never trains, so one probe serves for the run', async () => {
    const userFile = path.join(work, 'user.json');
    writeFileSync(userFile, JSON.stringify(user));
    const out = path.join(work, 'out-base');
    const data = path.join(work, 'data-base');
    const run = await runCli([
      'eval', 'personalize', '--user', userFile, '--method', 'base', '--sessions', '4', '--seed', '5', '--probe-size', '4',
      '--json', '--out', out, '--data', data, '--engine', 'local', '--model', folder, '--judge', 'rules', '--max-tokens', '12', '--train-every', '1',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(path.join(data, 'server.log'), 'utf8')).not.toMatch(/training on/);
    const result = personalizeResultSchema.parse(JSON.parse(run.stdout));
    expect(result.probe).toHaveLength(1);
    expect(result.sessions.every((session) => session.policyVersion === 0)).toBe(true);
    expect(result.method).toBe('base');
    expect(run.stderr).not.toMatch(/warning: the server built/);
    expect(readFileSync(path.join(out, 'summary.md'), 'utf8')).toContain('| brief-grader | base | 5 |');

    // The folder now holds that run: a second run on it would start from its versions, so it is refused.
    const again = await runCli([
      'eval', 'personalize', '--user', userFile, '--method', 'base', '--sessions', '1', '--seed', '6', '--probe-size', '4',
      '--out', path.join(work, 'out-again'), '--data', data, '--engine', 'local', '--model', folder, '--judge', 'rules',
    ]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`the data folder ${data} is not empty`);
    expect(existsSync(path.join(work, 'out-again'))).toBe(false);
  });

  it('runs several users at once through one server, each with its own key, and records each user apart', async () => {
    const userFile = path.join(work, 'user.json');
    writeFileSync(userFile, JSON.stringify(user));
    const other = path.join(work, 'other-user.json');
    writeFileSync(other, JSON.stringify({ ...user, name: 'terse-grader' }));
    const out = path.join(work, 'out-shared');
    const data = path.join(work, 'data-shared');
    const run = await runCli([
      'eval', 'personalize', '--user', `${userFile},${other}`, '--method', 'rl', '--sessions', '2', '--seed', '5', '--probe-size', '4',
      '--json', '--out', out, '--data', data, '--engine', 'local', '--model', folder, '--judge', 'rules', '--max-tokens', '12', '--policy-scope', 'user',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const results = personalizeResultSchema.array().parse(JSON.parse(run.stdout));
    expect(results.map((result) => [result.user, result.sharedWith])).toEqual([['brief-grader', ['terse-grader']], ['terse-grader', ['brief-grader']]]);
    // The keys went by environment, never into the recorded flags; each user trained and was probed on its own lineage.
    for (const result of results) {
      expect(result.serverArguments?.join(' ')).not.toContain('=');
      expect(result.serverArguments?.join(' ')).toContain('--policy-scope user');
    }
    expect(readFileSync(path.join(out, 'summary.md'), 'utf8')).toContain('| brief-grader (with terse-grader) | rl | 5 |');
    const store = createSqliteRecordStore({ path: path.join(data, 'clawrl.db') });
    try {
      for (const result of results) {
        for (const session of result.sessions) expect((await store.getSession(session.sessionId))?.user, session.sessionId).toBe(result.user);
      }
    } finally {
      await store.close();
    }
    const withUrl = await runCli(['eval', 'personalize', '--user', 'teacher,ta', '--method', 'rl', '--url', 'http://127.0.0.1:9']);
    expect(withUrl.code).toBe(2);
    expect(withUrl.stderr).toContain('drop --url');
  }, 180_000);

  it('rejects a user file that is not a simulated-user spec, and a --max-wait under a minute, before starting anything', async () => {
    const userFile = path.join(work, 'bad-user.json');
    writeFileSync(userFile, JSON.stringify({ name: 'x', task: 'dance' }));
    const run = await runCli(['eval', 'personalize', '--user', userFile, '--method', 'rl', '--url', 'http://127.0.0.1:9']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/not a simulated-user spec[\s\S]*task/);

    const noWait = await runCli(['eval', 'personalize', '--user', 'student', '--method', 'rl', '--url', 'http://127.0.0.1:9', '--max-wait', '0']);
    expect(noWait.code).toBe(2);
    expect(noWait.stderr).toMatch(/--max-wait must be an integer of at least 1, got "0"/);
  });
});
