/** Turns become judgements and samples inside the running server: next-state judging and explicit feedback. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVllmServer, type FakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

let upstream: FakeVllmServer;
let server: ClawrlServer;

interface TurnView {
  judgement: { score: number; judge: string; promptVersion: string } | null;
  samples: Array<{ status: string; method: string; policyVersion: number }>;
}

async function chat(messages: unknown[], headers: Record<string, string>): Promise<{ turnId: string; reply: string }> {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'fake-model', messages }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
  return { turnId: response.headers.get('x-clawrl-turn-id') ?? '', reply: body.choices[0]?.message.content ?? '' };
}

async function waitForJudgement(turnId: string): Promise<TurnView> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const view = (await (await fetch(`${server.url}/admin/turns/${turnId}`)).json()) as TurnView;
    if (view.judgement !== null && view.samples.length > 0) return view;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`turn ${turnId} was not judged in time`);
}

beforeAll(async () => {
  upstream = await startFakeVllmServer({ model: 'fake-model', autoToolChoice: true });
  server = await startClawrlServer(['--engine', 'vllm', '--upstream', upstream.url, '--model', 'fake-model', '--judge', 'rules', '--method', 'rl']);
});
afterAll(async () => {
  await server?.stop();
  await upstream?.close();
});

describe('judging inside clawrl serve', () => {
  it('judges a turn from the user reply that follows it and builds an RL sample', async () => {
    const headers = { 'x-session-id': 'judged-session' };
    const first = await chat([{ role: 'user', content: 'hello one' }], headers);
    await chat(
      [
        { role: 'user', content: 'hello one' },
        { role: 'assistant', content: first.reply },
        { role: 'user', content: 'No, that is wrong, do it again.' },
      ],
      headers,
    );
    const view = await waitForJudgement(first.turnId);
    expect(view.judgement).toMatchObject({ score: -1, judge: 'rules' });
    expect(view.samples[0]).toMatchObject({ status: 'ready', method: 'rl', policyVersion: 0 });
  });

  it('judges the last turn of a session from explicit feedback', async () => {
    const last = await chat([{ role: 'user', content: 'hello two' }], { 'x-session-id': 'feedback-session' });
    const feedback = await fetch(`${server.url}/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ turn_id: last.turnId, thumbs: 'up' }),
    });
    expect(feedback.status).toBe(200);
    const view = await waitForJudgement(last.turnId);
    expect(view.judgement?.score).toBe(1);
    const unknown = await fetch(`${server.url}/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ turn_id: 'turn_missing', score: 1 }),
    });
    expect(unknown.status).toBe(404);
  });
});
