import { describe, expect, it, vi } from 'vitest';
import type {
  OverviewResponse,
  PoliciesResponse,
  SessionPageResponse,
  SessionTurnsResponse,
  TurnTokensResponse,
} from './dashboard-api.js';
import { createTestGateway, type TestGateway } from '../testing/create-test-gateway.js';

const model = 'scripted-model';

async function chat(gateway: TestGateway, sessionId: string, content: string): Promise<string> {
  const response = await gateway.chat({ model, messages: [{ role: 'user', content }] }, { 'x-session-id': sessionId });
  expect(response.status).toBe(200);
  await response.json();
  return response.headers.get('x-clawrl-turn-id') ?? '';
}

async function read<Body>(gateway: TestGateway, route: string, headers: Record<string, string> = {}): Promise<Body> {
  const response = await gateway.app.request(route, { headers });
  expect(response.status, route).toBe(200);
  return (await response.json()) as Body;
}

describe('dashboard routes', () => {
  it('pages sessions by cursor, and shows a session turn with its feedback score and hint', async () => {
    const gateway = createTestGateway();
    const first = await chat(gateway, 'session-a', 'What is 2 + 3?');
    await chat(gateway, 'session-b', 'hello');
    const feedback = await gateway.app.request('/v1/feedback', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ turn_id: first, score: 1, hint: 'Answer in one word.' }),
    });
    expect(feedback.status).toBe(200);

    const page = await read<SessionPageResponse>(gateway, '/admin/dashboard/sessions?limit=1');
    expect(page.data).toHaveLength(1);
    expect(page.next).not.toBeNull();
    const rest = await read<SessionPageResponse>(gateway, `/admin/dashboard/sessions?limit=1&after=${encodeURIComponent(page.next ?? '')}`);
    expect([...page.data, ...rest.data].map((session) => session.id).sort()).toEqual(['session-a', 'session-b']);
    expect((await read<SessionPageResponse>(gateway, '/admin/dashboard/sessions?search=session-a')).data.map((session) => session.id)).toEqual(['session-a']);

    const turns = await read<SessionTurnsResponse>(gateway, '/admin/dashboard/sessions/session-a/turns');
    expect(turns.session.mainTurns).toBe(1);
    expect(turns.turns[0]).toMatchObject({ id: first, index: 0, input: 'What is 2 + 3?', judgement: { score: 1, hint: 'Answer in one word.', judge: 'feedback' } });
    expect(turns.next).toBeNull();
  });

  it("shows why a turn scored as it did: each vote's text, the hint answers with the kept candidate, the feedback, in one judging read per page", async () => {
    const gateway = createTestGateway();
    const judged = await chat(gateway, 'why', 'What is 17 + 25?');
    const rolled = await chat(gateway, 'why', 'And 9 + 9?');
    const plain = await chat(gateway, 'why', 'Thanks.');
    const votes = [
      { kind: 'verdict' as const, text: `The sum is wrong: 17 + 25 is 42, not 32. ${'Carry the one. '.repeat(20)}\\boxed{-1}`, score: -1 as const, hint: null, rejection: null },
      { kind: 'verdict' as const, text: 'Looks fine \\boxed{1}', score: 1 as const, hint: null, rejection: null },
      { kind: 'hint' as const, text: '[HINT_START]Carry the one when a column passes nine.[HINT_END]', score: -1 as const, hint: 'Carry the one when a column passes nine.', rejection: null },
      { kind: 'hint' as const, text: '[HINT_START]Check sums.[HINT_END]', score: -1 as const, hint: 'Check sums.', rejection: null },
      { kind: 'hint' as const, text: '[HINT_START]No.[HINT_END]', score: -1 as const, hint: null, rejection: 'hint-too-short' },
    ];
    await gateway.store.recordJudgement({
      turnId: judged, judge: 'openai', judgeModel: 'judge-model', promptVersion: 'v1', score: -1, votes,
      hint: 'Carry the one when a column passes nine.', hintCandidates: ['Carry the one when a column passes nine.', 'Check sums.'], hintSelection: 'longest',
      latencyMs: 10, createdAt: 1,
    });
    await gateway.store.recordFeedback({ turnId: judged, score: null, text: 'the user said 42', hint: null, tenant: null, user: null, createdAt: 2 });
    const rollout = { runId: 'run-1', environment: 'arithmetic', step: 3, group: null, turnIndex: 0, outcomeReward: 1, processReward: -0.5, reward: 0.5 };
    await gateway.store.recordFeedback({ turnId: rolled, score: null, text: null, hint: null, tenant: null, user: null, createdAt: 3, rollout });

    const listJudgements = vi.spyOn(gateway.store, 'listJudgements');
    const turnJudgings = vi.spyOn(gateway.store.dashboard, 'turnJudgings');
    const page = await read<SessionTurnsResponse>(gateway, '/admin/dashboard/sessions/why/turns');
    expect(turnJudgings).toHaveBeenCalledTimes(1);
    expect(listJudgements).not.toHaveBeenCalled();
    const [first, second, third] = page.turns;
    expect(first?.judgement).toEqual({
      score: -1,
      scoreSource: 'judge',
      judgeScore: -1,
      votes,
      hint: 'Carry the one when a column passes nine.',
      hintCandidates: ['Carry the one when a column passes nine.', 'Check sums.'],
      judgeHint: 'Carry the one when a column passes nine.',
      hintSelection: 'longest',
      judge: 'feedback',
      feedback: { score: null, text: 'the user said 42', hint: null, rollout: null },
    });
    expect(second?.judgement).toMatchObject({ score: 0.5, scoreSource: 'rollout', judgeScore: null, votes: [], feedback: { rollout: { runId: 'run-1', outcomeReward: 1, processReward: -0.5, reward: 0.5 } } });
    expect(third).toMatchObject({ id: plain, judgement: null, sample: null });

    await gateway.store.recordFeedback({ turnId: judged, score: 1, text: 'actually fine', hint: 'Show the carry.', tenant: null, user: null, createdAt: 4 });
    const turn = await read<TurnTokensResponse>(gateway, `/admin/dashboard/turns/${judged}`);
    expect(turn.judgement).toMatchObject({ score: 1, scoreSource: 'feedback', judgeScore: -1, hint: 'Show the carry.', judgeHint: 'Carry the one when a column passes nine.', feedback: { text: 'actually fine' } });
    expect(turn.judgement?.votes).toEqual(votes);
  });

  it("shows a turn's system prompt apart from what the user said, and no system prompt on a turn without one", async () => {
    const gateway = createTestGateway();
    const system = `You are an agent.\n${'Tool rules. '.repeat(2000)}`;
    const response = await gateway.chat({ model, messages: [{ role: 'system', content: system }, { role: 'user', content: 'What is 2 + 3?' }] }, { 'x-session-id': 'agent' });
    await response.json();
    await chat(gateway, 'plain', 'hello');
    const [agent, plain] = await Promise.all(['agent', 'plain'].map((id) => read<SessionTurnsResponse>(gateway, `/admin/dashboard/sessions/${id}/turns`)));
    expect(agent?.turns[0]).toMatchObject({ input: 'What is 2 + 3?', system });
    expect(plain?.turns[0]).toMatchObject({ input: 'hello', system: null });
  });

  it("returns a turn's tokens with their log-probs, as text when the server can decode them", async () => {
    const gateway = createTestGateway();
    const turnId = await chat(gateway, 'session-a', 'hi');
    const ids = await read<TurnTokensResponse>(gateway, `/admin/dashboard/turns/${turnId}`);
    const turn = await gateway.store.getTurn(turnId);
    expect(ids.response.map((token) => token.id)).toEqual(turn?.responseTokenIds);
    expect(ids.response.map((token) => token.logprob)).toEqual(turn?.logprobs);
    expect(ids.response.every((token) => token.text === null && token.teacherGap === null)).toBe(true);
    gateway.context.decodeTokens = async (tokenIds) => tokenIds.map((id) => `<${id}>`);
    const decoded = await read<TurnTokensResponse>(gateway, `/admin/dashboard/turns/${turnId}`);
    expect(decoded.prompt.map((token) => token.text)).toEqual(turn?.promptTokenIds.map((id) => `<${id}>`));
    expect(decoded.response.map((token) => token.text)).toEqual(turn?.responseTokenIds.map((id) => `<${id}>`));
  });

  it('charts the last hour on the overview and lists policy versions newest first', async () => {
    const gateway = createTestGateway();
    await chat(gateway, 'session-a', 'hi');
    await gateway.store.recordPolicyVersion({ version: 0, parent: null, kind: 'base', files: {}, step: null, samples: 0, metrics: null, createdAt: 1 }, { activate: true });
    const overview = await read<OverviewResponse>(gateway, '/admin/dashboard/overview?window=3600000&bucket=60000');
    expect(overview.status.turns.main).toBe(1);
    expect(overview.series.buckets.reduce((sum, bucket) => sum + bucket.mainTurns, 0)).toBe(1);
    const policies = await read<PoliciesResponse>(gateway, '/admin/dashboard/policies');
    expect(policies.data.map((policy) => [policy.version, policy.active])).toEqual([[0, true]]);
    const refused = await gateway.app.request('/admin/dashboard/overview?window=3600000&bucket=1000');
    expect(refused.status).toBe(400);
  });

  it('refuses a wrong key, and serves the page and assets without one', async () => {
    const gateway = createTestGateway({ adminKey: 'the-admin-key' });
    expect((await gateway.app.request('/admin/dashboard/overview', { headers: { authorization: 'Bearer wrong-key-123' } })).status).toBe(401);
    expect((await gateway.app.request('/admin/dashboard/overview', { headers: { authorization: 'Bearer the-admin-key' } })).status).toBe(200);
    expect((await gateway.app.request('/')).status).toBe(404);
    gateway.context.dashboardAssets = { get: (name) => (name === 'index.html' ? { body: new TextEncoder().encode('<!doctype html>'), contentType: 'text/html' } : null) };
    const page = await gateway.app.request('/');
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('<!doctype html>');
    expect((await gateway.app.request('/dashboard/assets/missing.js')).status).toBe(404);
  });
});
