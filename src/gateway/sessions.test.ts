import { describe, expect, it, vi } from 'vitest';
import type { ChatMessage } from '../spec/chat.js';
import { createTestGateway, readEvents } from './testing/create-test-gateway.js';

const model = 'scripted-model';
const system = { role: 'system', content: 'You are a helpful agent.' };

async function turn(gateway: ReturnType<typeof createTestGateway>, messages: unknown[], headers: Record<string, string> = {}, path?: string) {
  const response = await gateway.chat({ model, messages }, headers, path);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
  const record = await gateway.store.getTurn(response.headers.get('x-clawrl-turn-id') ?? '');
  return { reply: body.choices[0]?.message.content ?? '', record: record!, sessionId: response.headers.get('x-clawrl-session-id') };
}

describe('sessions and next states', () => {
  it('follows X-Session-Id and links the next state when the next main turn arrives', async () => {
    const gateway = createTestGateway();
    const headers = { 'x-session-id': 'alpha' };
    const first = await turn(gateway, [system, { role: 'user', content: 'hi' }], headers);
    expect(first.record.sessionId).toBe('alpha');
    expect(first.record.nextState).toBeNull();
    await turn(gateway, [system, { role: 'user', content: 'hi' }, { role: 'assistant', content: first.reply }, { role: 'user', content: 'thanks!' }], headers);
    const linked = await gateway.store.getTurn(first.record.id);
    expect(linked?.nextState).toEqual([{ role: 'user', content: 'thanks!' }]);
    const session = await gateway.store.getSession('alpha');
    expect(session?.turnIds).toHaveLength(2);
  });

  it('looks up no previous turn for a session it creates, and does for a named one', async () => {
    const gateway = createTestGateway();
    const lookUp = vi.spyOn(gateway.store, 'getLastMainTurn');
    const fresh = await turn(gateway, [{ role: 'user', content: 'a new conversation' }]);
    expect(fresh.record.sessionId).toBe(fresh.sessionId);
    expect(lookUp).not.toHaveBeenCalled();
    await turn(gateway, [{ role: 'user', content: 'hi' }], { 'x-session-id': 'named' });
    expect(lookUp).toHaveBeenCalledWith('named');
  });

  it('takes the session from the /s/{id}/v1 prefix', async () => {
    const gateway = createTestGateway();
    const first = await turn(gateway, [{ role: 'user', content: 'hi' }], {}, '/s/from-path/v1/chat/completions');
    expect(first.record.sessionId).toBe('from-path');
    const models = await gateway.app.request('/s/from-path/v1/models');
    expect(((await models.json()) as { data: Array<{ id: string }> }).data[0]?.id).toBe(model);
  });

  it('infers the session from the conversation when no header is sent (OpenClaw style)', async () => {
    const gateway = createTestGateway();
    const context = (text: string) => ({ role: 'user', content: [{ type: 'text', text: `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>${text}` }] });
    const userOne = { role: 'user', content: 'What is 2 plus 2?' };
    const otherSession = await turn(gateway, [system, { role: 'user', content: 'unrelated' }, context('a')]);
    const first = await turn(gateway, [system, userOne, context('b')]);
    expect(first.record.sessionId).not.toBe(otherSession.record.sessionId);
    const second = await turn(gateway, [
      system,
      userOne,
      { role: 'assistant', content: first.reply },
      { role: 'user', content: 'Thanks. And 4 plus 4?' },
      context('c'),
    ]);
    expect(second.record.sessionId).toBe(first.record.sessionId);
    expect((await gateway.store.getTurn(first.record.id))?.nextState).toEqual([{ role: 'user', content: 'Thanks. And 4 plus 4?' }]);
    const third = await turn(gateway, [
      system,
      userOne,
      { role: 'assistant', content: first.reply },
      { role: 'user', content: 'Thanks. And 4 plus 4?' },
      { role: 'assistant', content: second.reply },
      { role: 'user', content: 'bye' },
    ]);
    expect(third.record.sessionId).toBe(first.record.sessionId);
    expect(third.record.index).toBe(2);
  });

  it('links tool results as the next state of a tool-call turn', async () => {
    const { createScriptedInferenceEngine } = await import('./testing/scripted-inference-engine.js');
    let call = 0;
    const engine = createScriptedInferenceEngine({
      reply: () => (call++ === 0 ? { text: '', toolCalls: [{ id: 'call_9', name: 'lookup', arguments: '{"q":"x"}' }] } : { text: 'done' }),
    });
    const gateway = createTestGateway({ engine });
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const first = await gateway.chat({ model, tools, messages: [{ role: 'user', content: 'find x' }] });
    const firstId = first.headers.get('x-clawrl-turn-id') ?? '';
    const assistant = { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '{ "q": "x" }' } }] };
    const toolResult = { role: 'tool', tool_call_id: 'call_9', content: 'x is 42' };
    await gateway.chat({ model, tools, messages: [{ role: 'user', content: 'find x' }, assistant, toolResult] });
    const linked = await gateway.store.getTurn(firstId);
    expect(linked?.nextState).toEqual<ChatMessage[]>([{ role: 'tool', content: 'x is 42', toolCallId: 'call_9' }]);
  });

  it('serves side turns without training on them or linking through them', async () => {
    const gateway = createTestGateway();
    const headers = { 'x-session-id': 'beta' };
    const main = await turn(gateway, [{ role: 'user', content: 'hi' }], headers);
    const side = await turn(gateway, [{ role: 'user', content: 'Read HEARTBEAT.md and reply HEARTBEAT_OK.' }], headers);
    expect(side.record.type).toBe('side');
    expect(side.record.trainable).toBe(false);
    expect(side.record.index).toBe(-1);
    const explicit = await turn(gateway, [{ role: 'user', content: 'hi' }], { ...headers, 'x-turn-type': 'side' });
    expect(explicit.record.type).toBe('side');
    expect((await gateway.store.getTurn(main.record.id))?.nextState).toBeNull();
  });

  it('closes the session on X-Session-Done and reopens it on new traffic', async () => {
    const gateway = createTestGateway();
    await turn(gateway, [{ role: 'user', content: 'hi' }], { 'x-session-id': 'gamma', 'x-session-done': '1' });
    expect((await gateway.store.getSession('gamma'))?.status).toBe('closed');
    await turn(gateway, [{ role: 'user', content: 'again' }], { 'x-session-id': 'gamma' });
    expect((await gateway.store.getSession('gamma'))?.status).toBe('open');
  });

  it('records a turn aborted by the client mid-stream as aborted and untrainable', async () => {
    const gateway = createTestGateway();
    gateway.engine.tokenDelayMs = 5;
    const response = await gateway.chat({ model, stream: true, messages: [{ role: 'user', content: 'a long question indeed' }] });
    const turnId = response.headers.get('x-clawrl-turn-id') ?? '';
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    for (let attempt = 0; attempt < 100 && (await gateway.store.getTurn(turnId)) === null; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const turnRecord = await gateway.store.getTurn(turnId);
    expect(turnRecord?.status).toBe('aborted');
    expect(turnRecord?.trainable).toBe(false);
    expect(turnRecord?.finishReason).toBe('aborted');
    expect(turnRecord!.response.content.length).toBeLessThan('echo: a long question indeed'.length);
  });

  it('stores turns of engines without token ids as not trainable', async () => {
    const { createScriptedInferenceEngine } = await import('./testing/scripted-inference-engine.js');
    const gateway = createTestGateway({ engine: createScriptedInferenceEngine({ trainable: false }) });
    const { record } = await turn(gateway, [{ role: 'user', content: 'hi' }]);
    expect(record.trainable).toBe(false);
    expect(record.promptTokenIds).toEqual([]);
  });

  it('serves the admin views in the shapes of the design brief', async () => {
    const gateway = createTestGateway();
    const { record } = await turn(gateway, [{ role: 'user', content: 'hi' }], { 'x-session-id': 'delta' });
    const status = (await (await gateway.app.request('/admin/status')).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ sessions: 1, turns: { main: 1, side: 0 }, judged: 0, samples: { ready: 0, trained: 0 }, trainSteps: 0, policyVersion: 0 });
    const sessions = (await (await gateway.app.request('/admin/sessions')).json()) as { data: Array<{ id: string; status: string; turnIds: string[] }> };
    expect(sessions.data[0]).toMatchObject({ id: 'delta', status: 'open', turnIds: [record.id] });
    const turnView = (await (await gateway.app.request(`/admin/turns/${record.id}`)).json()) as Record<string, unknown>;
    expect(turnView).toMatchObject({ id: record.id, sessionId: 'delta', type: 'main', policyVersion: 0, nextState: null, judgement: null, samples: [] });
    expect(turnView.responseTokenIds).toEqual(record.responseTokenIds);
    expect((turnView.logprobs as number[]).length).toBe((turnView.responseTokenIds as number[]).length);
    expect((await gateway.app.request('/admin/turns/nope')).status).toBe(404);
    const metrics = await (await gateway.app.request('/metrics')).text();
    expect(metrics).toContain('clawrl_http_requests_total');
    expect(metrics).toContain('clawrl_turns_recorded_total{type="main",status="completed"} 1');
    expect(metrics).toContain('clawrl_queue_depth');
    expect(metrics).toContain('clawrl_judging{metric="pending"} 0');
    const { events } = await readEvents(await gateway.chat({ model, stream: true, messages: [{ role: 'user', content: 'x' }] }));
    expect(events.length).toBeGreaterThan(0);
  });
});
