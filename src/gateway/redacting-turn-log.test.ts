import { describe, expect, it } from 'vitest';
import { createRedactor } from '../core/redaction/create-redactor.js';
import type { ChatMessage } from '../spec/chat.js';
import { createEnginePromptTokenizer } from './engine-prompt-tokenizer.js';
import { createRedactingTurnLog, type TurnRedaction } from './redacting-turn-log.js';
import { createInlineConversationRedactor } from './conversation-redactor.js';
import { createScriptedInferenceEngine } from './testing/scripted-inference-engine.js';
import { createTestGateway } from './testing/create-test-gateway.js';

const key = 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0f';
const email = 'jane.doe@acme-corp.com';
/** The scripted engine's prompt ids: one per character of `role:content`, joined by `|`. */
const scriptedPromptIds = (messages: ChatMessage[]) => Array.from(messages.map((message) => `${message.role}:${message.content}`).join('|')).map((character) => (character.codePointAt(0) ?? 0) + 10);

function gatewayWith(redaction: Omit<TurnRedaction, 'redactor'>, reply: string | null) {
  const engine = createScriptedInferenceEngine(reply === null ? {} : { reply: () => ({ text: reply }) });
  const gateway = createTestGateway({ engine });
  gateway.context.store = createRedactingTurnLog(gateway.store, { redactor: createInlineConversationRedactor(createRedactor()), ...redaction });
  return gateway;
}

async function send(gateway: ReturnType<typeof gatewayWith>, messages: ChatMessage[], session = 'session-a') {
  const response = await gateway.chat({ model: 'scripted-model', messages }, { 'x-session-id': session });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
  return { turnId: response.headers.get('x-clawrl-turn-id') ?? '', content: body.choices[0]?.message.content ?? '' };
}

describe('createRedactingTurnLog', () => {
  it('keeps a redacted prompt trainable with ids re-rendered to spell it, when the tokenizer gives back what was sampled', async () => {
    const gateway = gatewayWith({ renderPrompt: async (messages) => scriptedPromptIds(messages) }, 'Noted.');
    const messages: ChatMessage[] = [{ role: 'user', content: `my key is ${key}, mail me at ${email}` }];
    const { turnId } = await send(gateway, messages);
    const turn = await gateway.store.getTurn(turnId);
    expect(turn?.messages[0]?.content).toBe('my key is [REDACTED:api-key], mail me at [REDACTED:email]');
    expect(turn?.promptTokenIds).toEqual(scriptedPromptIds(turn?.messages ?? []));
    expect(turn?.responseTokenIds).toHaveLength('Noted.'.length);
    expect(turn?.logprobs).toHaveLength('Noted.'.length);
    expect(turn?.trainable).toBe(true);
  });

  it('asks the serving engine for the redacted prompt\'s ids when the gateway has no tokenizer that gives back the sampled ids', async () => {
    const tokenizerEngine = createScriptedInferenceEngine({});
    const gateway = gatewayWith({ renderPrompt: async () => [1, 2, 3], engineTokenize: createEnginePromptTokenizer(tokenizerEngine) }, 'Noted.');
    const { turnId } = await send(gateway, [{ role: 'user', content: `mail ${email}` }]);
    const turn = await gateway.store.getTurn(turnId);
    expect(turn?.promptTokenIds).toEqual(scriptedPromptIds([{ role: 'user', content: 'mail [REDACTED:email]' }]));
    expect(turn?.trainable).toBe(true);
    expect(tokenizerEngine.generateCalls[0]?.sampling.maxTokens).toBe(1);
  });

  it('drops the prompt ids and never trains when the redacted prompt cannot be re-rendered', async () => {
    for (const renderPrompt of [undefined, async () => [1, 2, 3]]) {
      const gateway = gatewayWith(renderPrompt === undefined ? {} : { renderPrompt }, 'Noted.');
      const { turnId } = await send(gateway, [{ role: 'user', content: `mail ${email}` }]);
      const turn = await gateway.store.getTurn(turnId);
      expect(turn).toMatchObject({ promptTokenIds: [], trainable: false });
      expect(turn?.responseTokenIds).toHaveLength('Noted.'.length);
    }
  });

  it('records a reply that held a secret redacted, without its ids and log-probs, never trained; the client still gets it', async () => {
    const gateway = gatewayWith({ renderPrompt: async (messages) => scriptedPromptIds(messages) }, null);
    const { turnId, content } = await send(gateway, [{ role: 'user', content: `call 10.20.30.40` }]);
    expect(content).toBe('echo: call 10.20.30.40');
    const turn = await gateway.store.getTurn(turnId);
    expect(turn?.response.content).toBe('echo: call [REDACTED:ip-address]');
    expect(turn).toMatchObject({ responseTokenIds: [], logprobs: [], trainable: false });
  });

  it('redacts the next state a later request links, and feedback text and hints', async () => {
    const gateway = gatewayWith({}, 'Which file?');
    const first = await send(gateway, [{ role: 'user', content: 'deploy it' }]);
    await send(gateway, [
      { role: 'user', content: 'deploy it' },
      { role: 'assistant', content: 'Which file?' },
      { role: 'user', content: `use .env with OPENAI_API_KEY=${key}` },
    ]);
    expect((await gateway.store.getTurn(first.turnId))?.nextState).toEqual([{ role: 'user', content: 'use .env with OPENAI_API_KEY=[REDACTED:api-key]' }]);
    const feedback = await gateway.app.request('/v1/feedback', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ turn_id: first.turnId, score: 1, text: `thanks, write to ${email}`, hint: `Ask for the file, then mail ${email} the result.` }),
    });
    expect(feedback.status).toBe(200);
    const [recorded] = await gateway.store.listFeedback(first.turnId);
    expect(recorded).toMatchObject({ text: 'thanks, write to [REDACTED:email]', hint: 'Ask for the file, then mail [REDACTED:email] the result.' });
  });
});
