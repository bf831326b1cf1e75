import { describe, expect, it } from 'vitest';
import { memoryMarker, type UserMemoryMode } from '../core/user-memory-context.js';
import type { ChatMessage } from '../spec/chat.js';
import { createTestGateway, type TestGateway } from './testing/create-test-gateway.js';

const model = 'scripted-model';
const keys = { alice: 'alice-key-12345', bob: 'bob-key-1234567', admin: 'admin-key-12345' };
const as = (key: string) => ({ authorization: `Bearer ${key}` });
const system: ChatMessage = { role: 'system', content: 'You are a tutor.' };

function gatewayWith(mode: UserMemoryMode | undefined): TestGateway {
  return createTestGateway({
    apiKeys: [{ tenant: 'team', user: 'team/alice', key: keys.alice }, { tenant: 'team', user: 'team/bob', key: keys.bob }],
    adminKey: keys.admin,
    ...(mode === undefined ? {} : { userMemory: { mode, maximumEntries: 30, maximumTokens: 400 } }),
  });
}

async function chat(gateway: TestGateway, key: string, content: string, sessionId: string): Promise<string> {
  const response = await gateway.chat({ model, messages: [system, { role: 'user', content }] }, { ...as(key), 'x-session-id': sessionId });
  expect(response.status).toBe(200);
  await response.json();
  return response.headers.get('x-clawrl-turn-id') as string;
}

async function feedback(gateway: TestGateway, key: string, body: Record<string, unknown>): Promise<void> {
  const response = await gateway.app.request('/v1/feedback', { method: 'POST', headers: { ...as(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
}

const lastSystemPrompt = (gateway: TestGateway) => gateway.engine.generateCalls.at(-1)?.messages[0]?.content;

describe('each user\'s memory in the gateway', () => {
  it('adds what a user said in feedback to that user\'s next requests, and to no one else\'s', async () => {
    const gateway = gatewayWith('context');
    const turn = await chat(gateway, keys.alice, 'What is 2+2?', 'a1');
    expect(lastSystemPrompt(gateway)).toBe('You are a tutor.');
    await feedback(gateway, keys.alice, { turn_id: turn, thumbs: 'down', text: '  Please   answer in one line,\n with a warm greeting. ' });
    await feedback(gateway, keys.alice, { turn_id: turn, score: 1, hint: 'Greet the user by saying hello first.' });

    const served = await chat(gateway, keys.alice, 'What is 3+3?', 'a2');
    expect(lastSystemPrompt(gateway)).toBe(`You are a tutor.\n\n${memoryMarker}\n- Please answer in one line, with a warm greeting.\n- Greet the user by saying hello first.`);
    // The turn is recorded as the model was prompted.
    expect((await gateway.store.getTurn(served))?.messages[0]?.content).toBe(lastSystemPrompt(gateway));
    await chat(gateway, keys.bob, 'What is 3+3?', 'b1');
    expect(lastSystemPrompt(gateway)).toBe('You are a tutor.');

    // Its session is still the one the client named.
    const recorded = await gateway.store.listSessions({});
    expect(recorded.map((session) => session.user).sort()).toEqual(['team/alice', 'team/alice', 'team/bob']);
    const entries = await gateway.store.listMemory('team/alice');
    expect(entries.map((entry) => [entry.kind, entry.sourceTurnId])).toEqual([['feedback', turn], ['hint', turn]]);
  });

  it('keeps continuing a session when the memory changed between its turns', async () => {
    const gateway = gatewayWith('context');
    const first = await gateway.chat({ model, messages: [system, { role: 'user', content: 'Hi' }] }, as(keys.alice));
    const reply = ((await first.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content as string;
    const sessionId = first.headers.get('x-clawrl-session-id');
    await feedback(gateway, keys.alice, { turn_id: first.headers.get('x-clawrl-turn-id'), text: 'Shorter answers please.' });
    const second = await gateway.chat({ model, messages: [system, { role: 'user', content: 'Hi' }, { role: 'assistant', content: reply }, { role: 'user', content: 'More?' }] }, as(keys.alice));
    expect(second.status).toBe(200);
    expect(second.headers.get('x-clawrl-session-id')).toBe(sessionId);
    expect(lastSystemPrompt(gateway)).toContain('- Shorter answers please.');
    const turn = await gateway.store.getTurn(first.headers.get('x-clawrl-turn-id') as string);
    expect(turn?.nextState).toEqual([{ role: 'user', content: 'More?' }]);
  });

  it('with teacher, fills the memory but serves prompts unchanged; off neither fills nor serves it', async () => {
    for (const mode of ['teacher', 'off', undefined] as const) {
      const gateway = gatewayWith(mode);
      const turn = await chat(gateway, keys.alice, 'What is 2+2?', 'a1');
      await feedback(gateway, keys.alice, { turn_id: turn, text: 'Answer in one line.' });
      await chat(gateway, keys.alice, 'What is 3+3?', 'a2');
      expect(lastSystemPrompt(gateway), String(mode)).toBe('You are a tutor.');
      expect((await gateway.store.listMemory('team/alice')).length, String(mode)).toBe(mode === 'teacher' ? 1 : 0);
    }
  });

  it('adds nothing for a score alone, and nothing for a request without a user', async () => {
    const gateway = createTestGateway({ userMemory: { mode: 'both', maximumEntries: 30, maximumTokens: 400 } });
    const turn = await chat(gateway, 'none', 'What is 2+2?', 'a1');
    await feedback(gateway, 'none', { turn_id: turn, thumbs: 'up', text: 'Nice.' });
    expect(await gateway.store.listUsers({})).toEqual([]);
    await chat(gateway, 'none', 'What is 3+3?', 'a2');
    expect(lastSystemPrompt(gateway)).toBe('You are a tutor.');
  });
});
