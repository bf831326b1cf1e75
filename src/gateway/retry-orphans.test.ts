import { describe, expect, it } from 'vitest';
import { silentLogger } from '../spec/logger.js';
import { createRetryOrphans } from './retry-orphans.js';
import { createTestGateway } from './testing/create-test-gateway.js';
import { createScriptedInferenceEngine } from './testing/scripted-inference-engine.js';

const model = 'scripted-model';
const user = (content: string) => ({ role: 'user', content });
const prompt = (content: string) => ({ messages: [{ role: 'user' as const, content }], tools: [] });

async function replyOf(response: Response): Promise<string> {
  return ((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content ?? '';
}

/** The turn ids the judge may claim now: what can ever become a sample. */
async function judgeable(gateway: ReturnType<typeof createTestGateway>): Promise<string[]> {
  const claims = await gateway.store.claimTurnsForJudging({ limit: 100, leaseMs: 1_000, now: Date.now(), workerId: 'w' });
  return claims.map((claim) => claim.turn.id);
}

describe('createRetryOrphans', () => {
  it('supersedes in-flight turns of the session with the same prompt; one being recorded is marked once durable', async () => {
    const marks: string[] = [];
    const orphans = createRetryOrphans(
      { getTurn: async () => null, markSuperseded: async (turnId, by) => (marks.push(`${turnId}>${by}`), true) },
      silentLogger,
    );
    const first = orphans.begin('s1', 'a', prompt('hi'));
    const other = orphans.begin('s1', 'b', prompt('something else'));
    const elsewhere = orphans.begin('s2', 'c', prompt('hi'));
    let recorded!: () => void;
    first.turn.recording = new Promise<void>((resolve) => (recorded = resolve));
    const retry = orphans.begin('s1', 'd', prompt('hi'));
    expect([first.turn.supersededBy, other.turn.supersededBy, elsewhere.turn.supersededBy]).toEqual(['d', null, null]);
    await Promise.resolve();
    expect(marks).toEqual([]);
    recorded();
    await retry.superseded;
    expect(marks).toEqual(['a>d']);
    // A turn already superseded is not taken again; an ended one is gone.
    retry.end();
    const again = orphans.begin('s1', 'e', prompt('hi'));
    await again.superseded;
    expect(first.turn.supersededBy).toBe('d');
    expect(marks).toEqual(['a>d']);
  });
});

describe('retry orphans through the gateway', () => {
  it('marks a recorded first attempt superseded by its retry; the conversation continues from the retry and only it is judged', async () => {
    const gateway = createTestGateway();
    const headers = { 'x-session-id': 'agent' };
    const opening = await replyOf(await gateway.chat({ model, messages: [user('hi')] }, headers));
    const second = [user('hi'), { role: 'assistant', content: opening }, user('and then?')];
    const attempt = await gateway.chat({ model, messages: second }, headers);
    const orphanId = attempt.headers.get('x-clawrl-turn-id') ?? '';
    await attempt.text();
    // The SDK timed out waiting and sends the very same request again.
    const retry = await gateway.chat({ model, messages: second }, headers);
    const retryId = retry.headers.get('x-clawrl-turn-id') ?? '';
    const retryReply = await replyOf(retry);
    expect(await gateway.store.getTurn(orphanId)).toMatchObject({ status: 'completed', trainable: false, untrainableReason: 'superseded', supersededBy: retryId });
    await gateway.chat({ model, messages: [...second, { role: 'assistant', content: retryReply }, user('thanks')] }, headers);
    expect(await gateway.store.getTurn(retryId)).toMatchObject({ supersededBy: null, trainable: true, nextState: [user('thanks')] });
    expect(await gateway.store.getTurn(orphanId)).toMatchObject({ nextState: null });
    await gateway.store.recordFeedback({ turnId: orphanId, score: -1, text: null, hint: null, tenant: null, user: null, createdAt: 1 });
    expect((await judgeable(gateway)).sort()).toEqual([retryId, (await gateway.store.getSession('agent'))?.turnIds[0]].sort());
  });

  it('marks a first attempt still streaming when its retry arrives, and links the retry, recorded first, all the same', async () => {
    // The first generation is long, the retry's short: the retry is answered (and recorded) while the first still generates.
    let generations = 0;
    const engine = createScriptedInferenceEngine({ reply: () => ({ text: (generations += 1) === 1 ? 'a slow and very long answer, token by token' : 'quick' }) });
    const gateway = createTestGateway({ engine });
    engine.tokenDelayMs = 15;
    const headers = { 'x-session-id': 'slow' };
    const messages = [user('an answer please')];
    const attempt = await gateway.chat({ model, messages, stream: true }, headers);
    const orphanId = attempt.headers.get('x-clawrl-turn-id') ?? '';
    const retry = await gateway.chat({ model, messages }, headers);
    const retryId = retry.headers.get('x-clawrl-turn-id') ?? '';
    const retryReply = await replyOf(retry);
    await attempt.text();
    await expect.poll(() => gateway.store.getTurn(orphanId)).toMatchObject({ trainable: false, untrainableReason: 'superseded', supersededBy: retryId });
    expect((await gateway.store.getSession('slow'))?.turnIds).toEqual([retryId, orphanId]);
    await gateway.chat({ model, messages: [...messages, { role: 'assistant', content: retryReply }, user('ok')] }, headers);
    expect(await gateway.store.getTurn(retryId)).toMatchObject({ nextState: [user('ok')] });
    expect(await judgeable(gateway)).toEqual([retryId]);
  });

  it('keeps an aborted first attempt marked, and leaves new turns, side turns and other sessions alone', async () => {
    const gateway = createTestGateway();
    gateway.engine.tokenDelayMs = 20;
    const abort = new AbortController();
    const url = await gateway.url();
    const attempt = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-id': 'gone' },
      body: JSON.stringify({ model, messages: [user('hello')], stream: true }),
      signal: abort.signal,
    });
    const orphanId = attempt.headers.get('x-clawrl-turn-id') ?? '';
    abort.abort();
    await expect.poll(() => gateway.store.getTurn(orphanId)).toMatchObject({ status: 'aborted' });
    gateway.engine.tokenDelayMs = 0;
    const retry = await gateway.chat({ model, messages: [user('hello')] }, { 'x-session-id': 'gone' });
    expect(await gateway.store.getTurn(orphanId)).toMatchObject({ status: 'aborted', untrainableReason: 'superseded', supersededBy: retry.headers.get('x-clawrl-turn-id') });
    // The same prompt as a side turn, or in another session, supersedes nothing.
    const side = await gateway.chat({ model, messages: [user('hello')] }, { 'x-session-id': 'gone', 'x-turn-type': 'side' });
    await side.text();
    await gateway.chat({ model, messages: [user('hello')] }, { 'x-session-id': 'elsewhere' });
    expect(await gateway.store.getTurn(retry.headers.get('x-clawrl-turn-id') ?? '')).toMatchObject({ supersededBy: null, trainable: true });
  });
});
