import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { hintSeparator } from '../core/hint.js';
import { hintSystemPrompt, judgePromptVersion } from '../core/judge-prompts.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { ScoreRequest, ScoreResult, TokenLogprob } from '../spec/inference-engine.js';
import { silentLogger } from '../spec/logger.js';
import type { RecordStore } from '../spec/record-store.js';
import type { NewTurn, SampleMethod } from '../spec/records.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { retryDelayMs } from '../core/retry-delay.js';
import { createJudgeWorker, type JudgeWorkerOptions } from './create-judge-worker.js';
import { createPrmJudge } from './create-prm-judge.js';
import { judgeModelOfSingleAnswers, type JudgeModel } from './judge-model.js';
import { createScoringEngine } from './testing/scoring-engine.js';

const rollout = [-0.5, -1, -0.25];

function turnOf(id: string): NewTurn {
  return {
    id,
    sessionId: 's1',
    type: 'main',
    status: 'completed',
    trainable: true,
    tenant: null, user: null,
    model: 'policy',
    policyVersion: 2,
    messages: [{ role: 'user', content: `What is 2+3? (${id})` }],
    tools: [],
    sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
    promptTokenIds: [1, 2, 3],
    responseTokenIds: [4, 5, 6],
    logprobs: rollout,
    response: { role: 'assistant', content: '**The answer is 5.**' },
    finishReason: 'stop',
    timings: { startedAt: 1_000, firstTokenAt: 1_001, endedAt: 1_002 },
    error: null,
    replyKey: null,
  };
}

/** A judge model that answers verdict prompts with `verdict` and hint prompts with the next of `hints`. */
function scriptedModel(state: { down: boolean; verdict: string; hints: string[] }): JudgeModel & { calls: number } {
  let hintCall = 0;
  const model = Object.assign(
    judgeModelOfSingleAnswers(async (request) => {
      model.calls += 1;
      if (state.down) throw new ClawrlError('upstream_error', 'judge endpoint unreachable', { retryable: true });
      if (request.messages[0]?.content === hintSystemPrompt) return state.hints[hintCall++ % state.hints.length] ?? '';
      return state.verdict;
    }),
    { calls: 0 },
  );
  return model;
}

const token = (id: number, logprob: number): TokenLogprob => ({ id, text: String(id), logprob });

describe('createJudgeWorker', () => {
  let store: RecordStore;
  let clock: number;
  let ids: number;
  let model: ReturnType<typeof scriptedModel>;
  let state: { down: boolean; verdict: string; hints: string[] };

  beforeEach(async () => {
    store = createSqliteRecordStore({ path: ':memory:' });
    clock = 10_000;
    ids = 0;
    state = { down: false, verdict: 'The user thanked. \\boxed{1}', hints: ['\\boxed{-1}'] };
    model = scriptedModel(state);
    await store.upsertSession({ id: 's1', tenant: null, user: null, at: 0 });
    await store.recordTurn(turnOf('t0'));
    await store.linkNextState('t0', [{ role: 'user', content: 'thanks, but no bold please' }], 5_000);
  });

  afterEach(async () => {
    await store.close();
  });

  function worker(method: SampleMethod, overrides: Partial<JudgeWorkerOptions> = {}) {
    return createJudgeWorker({
      store,
      judge: createPrmJudge({ judgeId: 'openai', modelName: 'judge-model', model, clock: () => clock }),
      method,
      logger: silentLogger,
      now: () => clock,
      createId: (prefix) => `${prefix}-${(ids += 1)}`,
      workerId: 'worker-a',
      retry: { initialMs: 1_000, maxMs: 60_000 },
      leaseMs: 60_000,
      turnTimeoutMs: 30_000,
      ...overrides,
    });
  }

  it('judges a linked turn with three votes and records an RL sample of its exact tokens', async () => {
    expect(await worker('rl').drain()).toEqual({ done: 1, failed: 0 });
    expect(model.calls).toBe(3);
    const [judgement] = await store.listJudgements('t0');
    expect(judgement).toMatchObject({ judge: 'openai', judgeModel: 'judge-model', promptVersion: judgePromptVersion, score: 1, hint: null });
    expect(judgement?.votes.map((vote) => vote.score)).toEqual([1, 1, 1]);
    expect(await store.listSamples()).toMatchObject([
      {
        turnId: 't0',
        method: 'rl',
        status: 'ready',
        policyVersion: 2,
        judgementId: judgement?.id,
        score: 1,
        promptTokenIds: [1, 2, 3],
        responseTokenIds: [4, 5, 6],
        rolloutLogprobs: rollout,
        lossMask: [1, 1, 1],
        distillationGaps: null,
        judgedAdvantages: null,
      },
    ]);
    expect((await store.counts()).judging).toMatchObject({ judged: 1, pending: 0, voteAgreement: 1, samples: { ready: 1 } });
  });

  it('leaves turns queued through a judge outage and judges them when it returns', async () => {
    state.down = true;
    const judging = worker('rl');
    expect(await judging.drain()).toEqual({ done: 0, failed: 1 });
    expect((await store.counts()).judging).toMatchObject({ judged: 0, pending: 1, retrying: 1 });
    expect(await store.listSamples()).toEqual([]);
    clock += 999;
    expect(await judging.drain()).toEqual({ done: 0, failed: 0 });
    clock += 1;
    expect(await judging.drain()).toEqual({ done: 0, failed: 1 });
    state.down = false;
    // The second failure doubles the backoff.
    clock += 1_999;
    expect(await judging.drain()).toEqual({ done: 0, failed: 0 });
    clock += 1;
    expect(await judging.drain()).toEqual({ done: 1, failed: 0 });
    expect((await store.counts()).judging).toMatchObject({ judged: 1, pending: 0, retrying: 0, samples: { ready: 1 } });
  });

  it('judges a turn a crashed worker held once its lease expires', async () => {
    await store.claimTurnsForJudging({ limit: 10, leaseMs: 5_000, now: clock, workerId: 'crashed' });
    const judging = worker('rl');
    expect(await judging.drain()).toEqual({ done: 0, failed: 0 });
    clock += 5_000;
    expect(await judging.drain()).toEqual({ done: 1, failed: 0 });
    expect(await store.listSamples({ status: 'ready' })).toHaveLength(1);
  });

  it('picks the hint whose teacher overlaps the student most and builds an OPD sample from its log-probs', async () => {
    state.verdict = 'The user complains. \\boxed{-1}';
    state.hints = [
      '\\boxed{1} [HINT_START]Write the answer as plain text, without any bold markers.[HINT_END]',
      '\\boxed{1} [HINT_START]Use plain text.[HINT_END]',
      '\\boxed{1} [HINT_START]short[HINT_END]',
    ];
    const studentTop = [[token(4, -0.5), token(7, -1)], [token(5, -1), token(8, -2)], [token(6, -0.25), token(9, -3)]];
    const engine = createScoringEngine((request: ScoreRequest): ScoreResult => {
      if ('tokenIds' in request.prompt) return { promptTokenIds: request.prompt.tokenIds, logprobs: rollout, top: studentTop };
      const hinted = request.prompt.messages.at(-1)?.content ?? '';
      const short = hinted.endsWith(`${hintSeparator}Use plain text.`);
      // The short hint's teacher agrees with the student's top-2 everywhere; the long one nowhere.
      const top = short ? studentTop : [[token(10, -0.1)], [token(11, -0.1)], [token(12, -0.1)]];
      return { promptTokenIds: [1], logprobs: short ? [-0.25, -3, -0.5] : [-9, -9, -9], top };
    });
    expect(await worker('opd', { engine }).drain()).toEqual({ done: 1, failed: 0 });
    const [judgement] = await store.listJudgements('t0');
    expect(judgement).toMatchObject({
      hint: 'Use plain text.',
      hintSelection: 'overlap',
      hintCandidates: ['Write the answer as plain text, without any bold markers.', 'Use plain text.'],
    });
    expect(judgement?.votes.filter((vote) => vote.kind === 'hint').map((vote) => vote.rejection)).toEqual([null, null, 'hint-too-short']);
    expect(engine.scoreRequests.every((request) => request.topK === 4 && request.responseTokenIds.join() === '4,5,6')).toBe(true);
    // teacher − rollout, unclipped (the trainer clips): −0.25 + 0.5 = 0.25, −3 + 1 = −2, −0.5 + 0.25 = −0.25.
    expect(await store.listSamples()).toMatchObject([
      { method: 'opd', status: 'ready', hint: 'Use plain text.', teacherLogprobs: [-0.25, -3, -0.5], distillationGaps: [0.25, -2, -0.25] },
    ]);
    expect((await store.counts()).judging).toMatchObject({ hintsAccepted: 1, hintsRejected: 0 });
  });

  it('scores teacher and student under the temperature the reply was sampled at (greedy: the plain softmax)', async () => {
    state.verdict = 'The user complains. \\boxed{-1}';
    state.hints = ['\\boxed{1} [HINT_START]Write the answer as plain text, without any bold markers.[HINT_END]'];
    await store.recordTurn({ ...turnOf('t1'), sampling: { ...turnOf('t1').sampling, temperature: 0.7 } });
    await store.linkNextState('t1', [{ role: 'user', content: 'no bold please' }], 6_000);
    await store.recordTurn({ ...turnOf('t2'), sampling: { ...turnOf('t2').sampling, temperature: 0 } });
    await store.linkNextState('t2', [{ role: 'user', content: 'no bold please' }], 7_000);
    const engine = createScoringEngine((request: ScoreRequest): ScoreResult => ({ promptTokenIds: [1], logprobs: rollout, top: [] }));
    expect(await worker('opd', { engine }).drain()).toEqual({ done: 3, failed: 0 });
    const temperatureOf = (id: string) =>
      [...new Set(engine.scoreRequests.filter((request) => JSON.stringify(request.prompt).includes(`(${id})`)).map((request) => request.temperature))];
    expect(temperatureOf('t0')).toEqual([1]);
    expect(temperatureOf('t1')).toEqual([0.7]);
    expect(temperatureOf('t2')).toEqual([1]);
  });

  it('scores teachers under the served version, or with per-user policies under the version that sampled the turn', async () => {
    state.verdict = 'The user complains. \\boxed{-1}';
    state.hints = ['\\boxed{1} [HINT_START]Write the answer as plain text, without any bold markers.[HINT_END]'];
    await store.recordTurn({ ...turnOf('t1'), policyVersion: 7 });
    await store.linkNextState('t1', [{ role: 'user', content: 'no bold please' }], 6_000);
    const served = createScoringEngine((): ScoreResult => ({ promptTokenIds: [1], logprobs: rollout, top: [] }));
    expect(await worker('opd', { engine: served }).drain()).toMatchObject({ failed: 0 });
    expect(new Set(served.scoreRequests.map((request) => request.policyVersion))).toEqual(new Set([undefined]));
    await store.recordTurn({ ...turnOf('t2'), policyVersion: 7 });
    await store.linkNextState('t2', [{ role: 'user', content: 'no bold please' }], 7_000);
    const perUser = createScoringEngine((): ScoreResult => ({ promptTokenIds: [1], logprobs: rollout, top: [] }));
    expect(await worker('opd', { engine: perUser, teacherUnderTurnVersion: true }).drain()).toMatchObject({ failed: 0 });
    expect(perUser.scoreRequests.filter((request) => JSON.stringify(request.prompt).includes('(t2)')).map((request) => request.policyVersion)).toContain(7);
  });

  it('with a support set, asks for top lists of 20 and distils over the student\'s top k instead of the sampled token', async () => {
    state.verdict = 'The user complains. \\boxed{-1}';
    state.hints = ['\\boxed{1} [HINT_START]Use plain text, no bold.[HINT_END]'];
    const studentTop = [[token(4, -0.5), token(7, -1), token(13, -4)], [token(5, -1)], [token(6, -0.25)]];
    const engine = createScoringEngine((request: ScoreRequest): ScoreResult => {
      if ('tokenIds' in request.prompt) return { promptTokenIds: request.prompt.tokenIds, logprobs: rollout, top: studentTop };
      // The teacher moves mass from 4 to 7 and does not list 5 at all (its lowest entry is −5).
      return { promptTokenIds: [1], logprobs: [-1.5, -5, -0.25], top: [[token(7, -0.25), token(4, -1.5)], [token(14, -0.1), token(15, -5)], [token(6, -0.25)]] };
    });
    expect(await worker('combine', { engine, supportTopK: 2 }).drain()).toEqual({ done: 1, failed: 0 });
    expect(engine.scoreRequests.length).toBeGreaterThan(0);
    expect(engine.scoreRequests.every((request) => request.topK === 20)).toBe(true);
    const [sample] = await store.listSamples();
    // The reward and the sampled tokens' gaps are kept; the set carries each token's own gap and weight.
    expect(sample).toMatchObject({ method: 'combine', status: 'ready', score: -1, distillationGaps: [-1, -4, 0] });
    const w4 = 1 / (1 + Math.exp(-0.5));
    expect(sample?.support).toEqual([
      [
        { id: 4, studentLogprob: -0.5, teacherLogprob: -1.5, gap: -1, weight: expect.closeTo(w4, 12) },
        { id: 7, studentLogprob: -1, teacherLogprob: -0.25, gap: 0.75, weight: expect.closeTo(1 - w4, 12) },
      ],
      // 5 is not in the teacher's list: its gap is taken against the list's lowest entry, −5.
      [{ id: 5, studentLogprob: -1, teacherLogprob: null, gap: -4, weight: 1 }],
      [{ id: 6, studentLogprob: -0.25, teacherLogprob: -0.25, gap: 0, weight: 1 }],
    ]);
  });

  it('drops OPD samples when the engine cannot score, and keeps the RL part of combine', async () => {
    state.verdict = 'The user complains. \\boxed{-1}';
    state.hints = ['\\boxed{1} [HINT_START]Use plain text, no bold.[HINT_END]'];
    await worker('opd', { engine: createScoringEngine(null) }).drain();
    expect(await store.listSamples()).toMatchObject([{ method: 'opd', status: 'dropped', dropReason: 'engine-cannot-score', distillationGaps: null }]);

    await store.recordTurn(turnOf('t1'));
    await store.linkNextState('t1', [{ role: 'user', content: 'no, use plain text' }], 6_000);
    await worker('combine').drain();
    expect(await store.listSamples({ turnId: 't1' })).toMatchObject([{ method: 'combine', status: 'ready', score: -1, distillationGaps: null, teacherLogprobs: null }]);
  });

  it('rebuilds the sample when feedback arrives: its score overrides the judge, its hint feeds OPD', async () => {
    const engine = createScoringEngine((request) => ({ promptTokenIds: [1], logprobs: [-0.5, -0.5, -0.5], ...(request.topK ? { top: [] } : {}) }));
    const judging = worker('combine', { engine });
    await judging.drain();
    await store.recordFeedback({ turnId: 't0', score: -1, text: null, hint: 'Never use bold text.', tenant: null, user: null, createdAt: 11_000 });
    expect(await judging.drain()).toEqual({ done: 1, failed: 0 });
    // Reused: the judge is not asked again for feedback without text.
    expect(model.calls).toBe(6);
    const samples = await store.listSamples({ turnId: 't0' });
    expect(samples.map((sample) => [sample.status, sample.dropReason])).toEqual([
      ['dropped', 'superseded'],
      ['ready', null],
    ]);
    // r = −1 and the gaps −0.5 − rollout: [0, 0.5, −0.25].
    expect(samples[1]).toMatchObject({ score: -1, hint: 'Never use bold text.', feedbackId: expect.any(Number), distillationGaps: [0, 0.5, -0.25] });
    const hinted = engine.scoreRequests.at(-1)?.prompt;
    expect(hinted !== undefined && 'messages' in hinted ? hinted.messages.at(-1)?.content : null).toBe(
      `What is 2+3? (t0)${hintSeparator}Never use bold text.`,
    );
  });

  it('finishes a turn whose hint-augmented prompt overflows the model: OPD dropped, the RL part of combine kept', async () => {
    state.verdict = 'The user complains. \\boxed{-1}';
    state.hints = ['\\boxed{1} [HINT_START]Use plain text, no bold.[HINT_END]', '\\boxed{1} [HINT_START]Never use bold text at all.[HINT_END]'];
    const overflowing = () =>
      createScoringEngine((request) => {
        if ('messages' in request.prompt) throw new ClawrlError('context_length_exceeded', '1042 tokens exceed the model\'s 1024 positions');
        return { promptTokenIds: request.prompt.tokenIds, logprobs: [-0.5, -0.5, -0.5], top: [] };
      });
    expect(await worker('opd', { engine: overflowing() }).drain()).toEqual({ done: 1, failed: 0 });
    expect(await store.listSamples()).toMatchObject([{ method: 'opd', status: 'dropped', dropReason: 'teacher-context-length-exceeded' }]);

    await store.recordTurn(turnOf('t1'));
    await store.linkNextState('t1', [{ role: 'user', content: 'no, use plain text' }], 6_000);
    expect(await worker('combine', { engine: overflowing() }).drain()).toEqual({ done: 1, failed: 0 });
    expect(await store.listSamples({ turnId: 't1' })).toMatchObject([{ method: 'combine', status: 'ready', score: -1, distillationGaps: null, teacherLogprobs: null }]);
  });

  it('still retries a turn when scoring fails for another reason', async () => {
    state.verdict = 'The user complains. \\boxed{-1}';
    state.hints = ['\\boxed{1} [HINT_START]Use plain text, no bold.[HINT_END]'];
    const failing = createScoringEngine(() => {
      throw new ClawrlError('upstream_error', 'the engine went away');
    });
    expect(await worker('opd', { engine: failing }).drain()).toEqual({ done: 0, failed: 1 });
    expect(await store.listSamples()).toEqual([]);
  });

  it('stores the reward and the unclipped teacher gap of a combine sample apart, never an advantage', async () => {
    state.verdict = 'The user complains. \\boxed{-1}';
    state.hints = ['\\boxed{1} [HINT_START]Use plain text, no bold.[HINT_END]'];
    const engine = createScoringEngine((request) => ({ promptTokenIds: [1], logprobs: [-3, -0.5, -0.5], ...(request.topK ? { top: [] } : {}) }));
    await worker('combine', { engine }).drain();
    // −3 − (−0.5) = −2.5 stays unclipped: the trainer's --opd-clip bounds it.
    const [sample] = await store.listSamples({ turnId: 't0' });
    expect(sample).toMatchObject({ method: 'combine', status: 'ready', score: -1, distillationGaps: [-2.5, 0.5, -0.25], judgedAdvantages: null });
    expect(sample).not.toHaveProperty('advantages');
  });

  it('trains the last turn of a session only from feedback, judging its text as the next state', async () => {
    await store.recordTurn(turnOf('last'));
    await store.closeSession('s1', 'done', 12_000);
    await worker('rl').drain();
    expect(await store.listSamples({ turnId: 'last' })).toEqual([]);
    expect((await store.counts()).judging.withoutNextState).toBe(1);

    state.verdict = 'The user complains. \\boxed{-1}';
    await store.recordFeedback({ turnId: 'last', score: null, text: 'no, that is wrong', hint: null, tenant: null, user: null, createdAt: 13_000 });
    await worker('rl').drain();
    const [judgement] = await store.listJudgements('last');
    expect(judgement?.score).toBe(-1);
    expect(await store.listSamples({ turnId: 'last' })).toMatchObject([{ status: 'ready', score: -1, distillationGaps: null }]);
  });

  it('runs on its own once started and stops on close', async () => {
    const judging = worker('rl', { pollIntervalMs: 5 });
    judging.start();
    await vi.waitFor(async () => expect(await store.listSamples()).toHaveLength(1), { timeout: 2_000, interval: 5 });
    await store.recordTurn(turnOf('t1'));
    await store.linkNextState('t1', [{ role: 'user', content: 'great' }], 6_000);
    await vi.waitFor(async () => expect(await store.listSamples()).toHaveLength(2), { timeout: 2_000, interval: 5 });
    await judging.close();
  });

  it('backs off exponentially up to the maximum', () => {
    const retry = { initialMs: 1_000, maxMs: 5_000 };
    expect([1, 2, 3, 4, 5].map((attempts) => retryDelayMs(attempts, retry))).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
  });
});
