/**
 * `clawrl rollout` end to end: the command starts its own `clawrl serve` (the tiny random model),
 * runs one step of group rollouts through the server's HTTP API, scores them with the
 * environment's verifier, posts each turn's reward with its group and turn index as feedback and
 * steps training; the trainer forms the group advantages. A random model solves no word problem,
 * so on `arithmetic` and `terminal` every group has no variance: the step is checked to drop and
 * count those samples (zero advantage) rather than train them. A user's
 * module environment whose verifier rewards replies of even length gives groups with variance,
 * and that step trains.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTinyModelFolder } from '../src/engines/local/testing/create-tiny-model-folder.js';
import { rolloutResultSchema, type RolloutResult } from '../src/rollouts/rollout-result.js';
import { createSqliteRecordStore } from '../src/stores/sqlite/create-sqlite-record-store.js';
import { runCli } from './testing/run-cli.js';
import { assertBuilt } from './testing/start-clawrl-server.js';

let folder: string;
let work: string;

beforeAll(() => {
  assertBuilt();
  folder = createTinyModelFolder();
  work = mkdtempSync(path.join(tmpdir(), 'clawrl-rollout-e2e-'));
});
afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

async function rolloutStep(env: string, name: string, extra: string[] = []): Promise<{ result: RolloutResult; data: string; out: string }> {
  const data = path.join(work, `${name}-data`);
  const out = path.join(work, `${name}-out`);
  const run = await runCli(
    [
      'rollout', '--env', env, '--group', '4', '--tasks-per-step', '2', '--parallel', '2', '--steps', '1', '--eval-size', '2',
      '--json', '--out', out, '--data', data, '--engine', 'local', '--model', folder, '--max-tokens', '12', ...extra,
    ],
    { cwd: work },
  );
  expect(run.code, run.stderr).toBe(0);
  const result = rolloutResultSchema.parse(JSON.parse(run.stdout));
  expect(JSON.parse(readFileSync(path.join(out, `rollout-${result.env}-seed1.json`), 'utf8'))).toEqual(result);
  expect(readFileSync(path.join(out, 'accuracy.svg'), 'utf8')).toContain('<svg');
  return { result, data, out };
}

/** The step's training rollouts as the server recorded them: each a session of main turns with rollout feedback. */
async function recordedStep(data: string) {
  const store = createSqliteRecordStore({ path: path.join(data, 'clawrl.db') });
  try {
    const sessions = (await store.listSessions({ limit: 100 })).filter((session) => /-s1-t\d+-g\d+$/.test(session.id));
    const turns = await store.getTurns(sessions.flatMap((session) => session.turnIds));
    const feedback = (await Promise.all(turns.map((turn) => store.listFeedback(turn.id)))).flat();
    const samples = await store.listSamples({ limit: 1000 });
    const evalTurns = (await store.getTurns(await store.listTurnIds({ limit: 1000 }))).filter((turn) => /-eval-/.test(turn.sessionId));
    const evalTemperatures = evalTurns.map((turn) => turn.sampling.temperature);
    return { sessions, turns, feedback, samples, evalTemperatures, counts: await store.counts() };
  } finally {
    await store.close();
  }
}

// A step starts a server, rolls out, judges and trains: minutes on a shared 2-core machine.
const stepTimeoutMs = 300_000;

describe('clawrl rollout', () => {
  it('runs a step on arithmetic through the server it starts; groups without variance are counted and dropped', async () => {
    const { result, data } = await rolloutStep('arithmetic', 'arithmetic', ['--temperature', '1', '--eval-temperature', '0']);
    expect(result).toMatchObject({ env: 'arithmetic', group: 4, tasksPerStep: 2, seed: 1, rewardMode: 'outcome', evalSize: 2, evalTemperature: 0 });
    const [step] = result.steps;
    expect(step).toMatchObject({ step: 1, groups: 2, turns: 8, accuracy: expect.any(Number), processVariedGroups: null });
    const recorded = await recordedStep(data);
    expect(recorded.sessions).toHaveLength(8);
    expect(recorded.turns.every((turn) => turn.type === 'main')).toBe(true);
    // Training rollouts sample at --temperature; the held-out episodes greedily, at --eval-temperature.
    expect(recorded.turns.every((turn) => turn.sampling.temperature === 1)).toBe(true);
    expect(recorded.evalTemperatures.length).toBeGreaterThan(0);
    expect(new Set(recorded.evalTemperatures)).toEqual(new Set([0]));
    expect(recorded.feedback).toHaveLength(8);
    for (const feedback of recorded.feedback) {
      // A reward with its provenance, no score: the outcome is the reward in outcome mode.
      expect(feedback.score).toBeNull();
      expect(feedback.rollout).toMatchObject({ environment: 'arithmetic', step: 1, turnIndex: 0, outcomeReward: expect.any(Number), processReward: null });
      expect(feedback.rollout?.reward).toBe(feedback.rollout?.outcomeReward);
      expect(feedback.rollout?.group).toMatch(/-s1-t[01]$/);
    }
    // Each group's samples carry its id; a group of equal rewards gets advantages of 0, which the trainer drops.
    const rewardsByGroup = new Map<string, Set<number>>();
    for (const feedback of recorded.feedback) {
      const group = feedback.rollout?.group ?? '';
      rewardsByGroup.set(group, (rewardsByGroup.get(group) ?? new Set()).add(feedback.rollout?.reward ?? Number.NaN));
    }
    const zeroGroups = [...rewardsByGroup.values()].filter((rewards) => rewards.size === 1).length;
    expect(zeroGroups).toBe(step?.zeroVarianceGroups);
    const rolloutSamples = recorded.samples.filter((sample) => sample.group !== null && sample.dropReason !== 'superseded');
    expect(rolloutSamples).toHaveLength(8);
    expect(rolloutSamples.filter((sample) => sample.dropReason === 'zero-advantage')).toHaveLength(4 * zeroGroups);
    expect(recorded.counts.judging.rolloutSamples.dropped + recorded.counts.judging.rolloutSamples.trained).toBe(8);
  }, stepTimeoutMs);

  it('runs a step on terminal: tool rollouts in the sandbox, verified on the directory', async () => {
    // A recipe of the user's replaces the model's; --normalize-std sets its groupNormalizeStd.
    writeFileSync(path.join(work, 'no-anchor-recipe.json'), JSON.stringify({ description: 'no anchor', anchorCoefficient: 0, rewardBaseline: 'batch' }));
    const { result, data } = await rolloutStep('terminal', 'terminal', ['--recipe', 'no-anchor-recipe.json', '--normalize-std']);
    expect(result).toMatchObject({ env: 'terminal', normalizeStd: true });
    expect(JSON.parse(readFileSync(path.join(data, 'rollout-recipe.json'), 'utf8'))).toEqual({ description: 'no anchor', anchorCoefficient: 0, rewardBaseline: 'batch', groupNormalizeStd: true });
    expect(readFileSync(path.join(data, 'server.log'), 'utf8')).toContain('rollout-recipe.json');
    const recorded = await recordedStep(data);
    expect(recorded.sessions).toHaveLength(8);
    // Every request offered the run tool.
    expect(recorded.turns.every((turn) => turn.tools.some((tool) => tool.name === 'run'))).toBe(true);
    expect(recorded.feedback.filter((feedback) => feedback.rollout !== null)).toHaveLength(result.steps[0]?.turns ?? -1);
  }, stepTimeoutMs);

  it("trains on a user's module environment whose groups have variance, with outcome and process rewards", async () => {
    const module = path.join(work, 'even-length-env.mjs');
    writeFileSync(
      module,
      `const verdictOf = (length) => ({ reward: length % 2 === 0 ? 1 : 0, correct: length % 2 === 0, detail: 'reply length ' + length });
export default {
  name: 'even-length', description: 'rewards replies of even length', maxTurns: 1,
  taskSource: { tasks: ({ split, count, offset = 0 }) => Array.from({ length: count }, (_, index) => ({ id: split + '-' + (offset + index), split, data: { question: 'Say something ' + split + ' ' + (offset + index) } })) },
  async create(task) {
    let done = false;
    return {
      async initialObservation() { return { messages: [{ role: 'user', content: task.data.question }], tools: [] }; },
      async step(action) { if (done) throw new Error('done'); done = true; const outcome = { length: action.content.length }; return { observation: [], done: true, outcome, verdict: verdictOf(outcome.length) }; },
      async close() {},
    };
  },
  verify(task, outcome) { return verdictOf(outcome.length ?? -1); },
};
`,
    );
    // A rules judge of the user's (--judge-rules, relative to the working folder) reads the verifier's
    // detail in the last turn's next state: +1 for an even length, −1 for an odd one.
    writeFileSync(
      path.join(work, 'even-length-judge.json'),
      JSON.stringify({
        name: 'even-length',
        rules: [
          { when: [{ on: 'nextState', rule: { type: 'regex', pattern: 'reply length \\d*[02468]\\b', expect: true } }], score: 1 },
          { when: [], score: -1 },
        ],
      }),
    );
    const judgeFlags = ['--judge', 'rules', '--judge-rules', 'even-length-judge.json'];
    const { result, data } = await rolloutStep('./even-length-env.mjs', 'module', ['--group', '6', '--reward', 'outcome+process', ...judgeFlags]);
    expect(result).toMatchObject({ env: 'even-length', rewardMode: 'outcome+process' });
    const [step] = result.steps;
    expect(step?.zeroVarianceGroups).toBeLessThan(2);
    // The judge's votes follow the outcome, so every group whose outcomes differ has differing process rewards.
    expect(step?.processVariedGroups).toBe((step?.groups ?? 0) - (step?.zeroVarianceGroups ?? 0));
    expect(step?.processReward).not.toBeNull();
    expect(step?.train).toBe('trained');
    expect(step?.policyVersion).toBe(1);
    const recorded = await recordedStep(data);
    const trained = recorded.samples.filter((sample) => sample.status === 'trained');
    expect(trained.length).toBeGreaterThan(0);
    expect(recorded.counts.judging.rolloutSamples.trained).toBe(trained.length);
    // Process mode: the PRM judged each episode's last turn, whose next state is the verifier's detail.
    expect(recorded.feedback.some((feedback) => feedback.text?.startsWith('The environment checked the result'))).toBe(true);
    const rolloutFeedback = recorded.feedback.filter((feedback) => feedback.rollout !== null);
    expect(rolloutFeedback).toHaveLength(12);
    for (const feedback of rolloutFeedback) {
      expect(feedback.rollout?.processReward).toBe(feedback.rollout?.outcomeReward === 1 ? 1 : -1);
      // The integrated reward, outside −1..1 for a success: posted as it is, never clamped.
      expect(feedback.rollout?.reward).toBe((feedback.rollout?.outcomeReward ?? 0) + (feedback.rollout?.processReward ?? 0));
    }
    expect(rolloutFeedback.some((feedback) => (feedback.rollout?.reward ?? 0) > 1)).toBe(true);
  }, stepTimeoutMs);
});
