import { describe, expect, it } from 'vitest';
import { createJudgeWorker } from '../../judge/create-judge-worker.js';
import { createRulesJudge, defaultRulesJudgeSpec } from '../../judge/create-rules-judge.js';
import { silentLogger } from '../../spec/logger.js';
import { createTestGateway, type TestGateway } from '../testing/create-test-gateway.js';

const model = 'scripted-model';

async function chat(gateway: TestGateway, messages: unknown[], headers: Record<string, string> = {}) {
  const response = await gateway.chat({ model, messages }, headers);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
  return {
    turnId: response.headers.get('x-clawrl-turn-id') ?? '',
    sessionId: response.headers.get('x-clawrl-session-id') ?? '',
    reply: body.choices[0]?.message.content ?? '',
  };
}

function postFeedback(gateway: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  return gateway.app.request('/v1/feedback', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A judge worker on the gateway's store with the default rules judge, building RL samples. */
function rulesJudgeWorkerOf(gateway: TestGateway) {
  let ids = 0;
  return createJudgeWorker({
    store: gateway.store,
    judge: createRulesJudge(defaultRulesJudgeSpec),
    method: 'rl',
    logger: silentLogger,
    now: gateway.context.now,
    createId: (prefix) => `${prefix}_${(ids += 1)}`,
    workerId: 'test-worker',
  });
}

async function errorOf(response: Response): Promise<{ status: number; code: string; param: string | null }> {
  const body = (await response.json()) as { error: { code: string; param: string | null } };
  return { status: response.status, code: body.error.code, param: body.error.param };
}

describe('POST /v1/feedback', () => {
  it('rejects malformed feedback with 400 and the offending field', async () => {
    const gateway = createTestGateway();
    const { turnId } = await chat(gateway, [{ role: 'user', content: 'hi' }]);
    const cases: [unknown, string | null][] = [
      ['{not json', null],
      [{ score: 1 }, 'turn_id'],
      [{ turn_id: turnId, session_id: 's', score: 1 }, 'turn_id'],
      [{ turn_id: turnId }, 'score'],
      [{ turn_id: turnId, score: 1.5 }, 'score'],
      [{ turn_id: turnId, score: 1, thumbs: 'up' }, 'score'],
      [{ turn_id: turnId, thumbs: 'sideways' }, 'thumbs'],
      [{ turn_id: turnId, hint: '  too short ' }, 'hint'],
      [{ turn_id: 7, score: 1 }, 'turn_id'],
    ];
    for (const [body, param] of cases) {
      expect(await errorOf(await postFeedback(gateway, body)), JSON.stringify(body)).toEqual({ status: 400, code: 'invalid_request', param });
    }
    expect(await gateway.store.getFeedback(turnId)).toBeNull();
  });

  it('answers 404 for unknown turns and sessions', async () => {
    const gateway = createTestGateway();
    expect(await errorOf(await postFeedback(gateway, { turn_id: 'turn_missing', thumbs: 'up' }))).toEqual({
      status: 404,
      code: 'not_found',
      param: 'turn_id',
    });
    expect(await errorOf(await postFeedback(gateway, { session_id: 'missing', score: 1 }))).toEqual({
      status: 404,
      code: 'not_found',
      param: 'session_id',
    });
  });

  it('records feedback on a turn, or on the latest main turn of a session, and queues it', async () => {
    const gateway = createTestGateway();
    const headers = { 'x-session-id': 'alpha' };
    const first = await chat(gateway, [{ role: 'user', content: 'hi' }], headers);
    const second = await chat(
      gateway,
      [{ role: 'user', content: 'hi' }, { role: 'assistant', content: first.reply }, { role: 'user', content: 'more' }],
      headers,
    );
    const byTurn = await postFeedback(gateway, { turn_id: first.turnId, thumbs: 'down', text: 'too curt' });
    expect(byTurn.status).toBe(200);
    expect(await byTurn.json()).toEqual({
      object: 'feedback',
      id: expect.any(Number),
      turn_id: first.turnId,
      session_id: 'alpha',
      score: -1,
      text: 'too curt',
      hint: null,
      queued: true,
      replaced_feedback_ids: [],
    });
    const bySession = await postFeedback(gateway, { session_id: 'alpha', score: 0.5, hint: ' Greet the user by name. ' });
    expect(await bySession.json()).toMatchObject({ turn_id: second.turnId, score: 0.5, hint: 'Greet the user by name.' });
    expect(await gateway.store.getFeedback(second.turnId)).toMatchObject({ score: 0.5, hint: 'Greet the user by name.', text: null });
    expect((await gateway.store.counts()).judging.pending).toBe(2);
  });

  it('lets a tenant reach only its own turns', async () => {
    const gateway = createTestGateway({ apiKeys: [{ tenant: 'alice', key: 'alice-key-123' }, { tenant: 'bob', key: 'bob-key-4567' }] });
    const { turnId } = await chat(gateway, [{ role: 'user', content: 'hi' }], { authorization: 'Bearer alice-key-123' });
    expect((await postFeedback(gateway, { turn_id: turnId, thumbs: 'up' })).status).toBe(401);
    expect((await postFeedback(gateway, { turn_id: turnId, thumbs: 'up' }, { authorization: 'Bearer bob-key-4567' })).status).toBe(404);
    const own = await postFeedback(gateway, { turn_id: turnId, thumbs: 'up' }, { authorization: 'Bearer alice-key-123' });
    expect(own.status).toBe(200);
    expect(await gateway.store.getFeedback(turnId)).toMatchObject({ tenant: 'alice', score: 1 });
  });

  it('overrides the judge: the admin view shows the feedback judgement and the rebuilt sample', async () => {
    const gateway = createTestGateway();
    const first = await chat(gateway, [{ role: 'user', content: 'hi' }], { 'x-session-id': 'beta' });
    await chat(
      gateway,
      [{ role: 'user', content: 'hi' }, { role: 'assistant', content: first.reply }, { role: 'user', content: 'thanks!' }],
      { 'x-session-id': 'beta' },
    );
    const worker = rulesJudgeWorkerOf(gateway);
    await worker.drain();
    const judged = (await (await gateway.app.request(`/admin/turns/${first.turnId}`)).json()) as Record<string, unknown>;
    expect(judged.judgement).toMatchObject({ score: 1, judge: 'rules', promptVersion: expect.stringMatching(/^rules-/) });
    expect(judged.samples).toMatchObject([{ status: 'ready', score: 1, method: 'rl' }]);

    expect((await postFeedback(gateway, { turn_id: first.turnId, thumbs: 'down' })).status).toBe(200);
    await worker.drain();
    const overridden = (await (await gateway.app.request(`/admin/turns/${first.turnId}`)).json()) as Record<string, unknown>;
    expect(overridden.judgement).toMatchObject({ score: -1, judge: 'feedback', votes: [expect.objectContaining({ score: 1 })] });
    expect(overridden.samples).toMatchObject([
      { status: 'dropped', dropReason: 'superseded' },
      { status: 'ready', score: -1, judgedAdvantages: null },
    ]);
    const status = (await (await gateway.app.request('/admin/status')).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ judged: 1, samples: { ready: 1, trained: 0, dropped: 1 }, judging: { pending: 0 } });
  });

  it('keeps repeated feedback on one turn: the newest counts for training, earlier ones stay visible and are named as replaced', async () => {
    const gateway = createTestGateway();
    const first = await chat(gateway, [{ role: 'user', content: 'hi' }], { 'x-session-id': 'gamma' });
    const hinted = (await (await postFeedback(gateway, { turn_id: first.turnId, thumbs: 'down', hint: 'Answer in one sentence.' })).json()) as Record<string, unknown>;
    expect(hinted).toMatchObject({ hint: 'Answer in one sentence.', replaced_feedback_ids: [] });
    const up = (await (await postFeedback(gateway, { turn_id: first.turnId, thumbs: 'up' })).json()) as Record<string, unknown>;
    expect(up).toMatchObject({ score: 1, replaced_feedback_ids: [hinted.id] });
    const scored = (await (await postFeedback(gateway, { session_id: 'gamma', score: 0.5 })).json()) as Record<string, unknown>;
    expect(scored).toMatchObject({ turn_id: first.turnId, replaced_feedback_ids: [hinted.id, up.id] });

    const worker = rulesJudgeWorkerOf(gateway);
    await worker.drain();
    const view = (await (await gateway.app.request(`/admin/turns/${first.turnId}`)).json()) as Record<string, unknown>;
    expect(view.feedback).toEqual([
      expect.objectContaining({ id: hinted.id, score: -1, hint: 'Answer in one sentence.' }),
      expect.objectContaining({ id: up.id, score: 1, hint: null }),
      expect.objectContaining({ id: scored.id, score: 0.5, hint: null }),
    ]);
    expect(view.judgement).toMatchObject({ judge: 'feedback', score: 0.5, feedback: { id: scored.id } });
    expect(view.samples).toEqual([expect.objectContaining({ status: 'ready', score: 0.5, feedbackId: scored.id })]);
  });

  it("takes a rollout's reward, unbounded, with its provenance, and builds the sample in its group at its turn index", async () => {
    const gateway = createTestGateway();
    const { turnId } = await chat(gateway, [{ role: 'user', content: 'What is 2 + 3?' }], { 'x-session-id': 'run-s1-t0-g3' });
    const rollout = { run_id: 'run', environment: 'arithmetic', step: 1, group: 'run-s1-t0', turn_index: 0, outcome_reward: 1, process_reward: 2 / 3, reward: 5 / 3 };
    const posted = await postFeedback(gateway, { turn_id: turnId, rollout });
    expect(posted.status).toBe(200);
    expect(await posted.json()).toMatchObject({ score: null, rollout, queued: true });
    expect(await gateway.store.getFeedback(turnId)).toMatchObject({
      score: null,
      rollout: { runId: 'run', environment: 'arithmetic', step: 1, group: 'run-s1-t0', turnIndex: 0, outcomeReward: 1, processReward: 2 / 3, reward: 5 / 3 },
    });
    const worker = rulesJudgeWorkerOf(gateway);
    await worker.drain();
    const view = (await (await gateway.app.request(`/admin/turns/${turnId}`)).json()) as Record<string, unknown>;
    expect(view.judgement).toMatchObject({ judge: 'feedback', score: 5 / 3 });
    expect(view.samples).toEqual([
      expect.objectContaining({ status: 'ready', score: 5 / 3, group: { id: 'run-s1-t0', turnIndex: 0 }, source: 'rollout', rewardSource: 'rollout' }),
    ]);
  });

  it('refuses an advantage, a score beside a rollout and a rollout without its turn index', async () => {
    const gateway = createTestGateway();
    const { turnId } = await chat(gateway, [{ role: 'user', content: 'hi' }]);
    const rollout = { run_id: 'run', environment: 'arithmetic', step: 1, group: null, turn_index: 0, outcome_reward: 0, process_reward: null, reward: 0 };
    const { turn_index: _turnIndex, ...withoutIndex } = rollout;
    const cases: [unknown, string][] = [
      [{ turn_id: turnId, rollout: { ...rollout, advantage: 0.5 } }, 'rollout'],
      [{ turn_id: turnId, score: 0.5, rollout }, 'score'],
      [{ turn_id: turnId, thumbs: 'up', rollout }, 'thumbs'],
      [{ turn_id: turnId, rollout: withoutIndex }, 'rollout.turn_index'],
    ];
    for (const [body, param] of cases) {
      expect(await errorOf(await postFeedback(gateway, body)), JSON.stringify(body)).toEqual({ status: 400, code: 'invalid_request', param });
    }
    expect(await gateway.store.getFeedback(turnId)).toBeNull();
    expect((await postFeedback(gateway, { turn_id: turnId, rollout })).status).toBe(200);
  });
});
