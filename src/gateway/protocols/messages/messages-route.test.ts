import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../../../spec/clawrl-error.js';
import { createTestGateway } from '../../testing/create-test-gateway.js';
import { createWeatherAgentEngine } from '../../testing/scripted-inference-engine.js';

const model = 'scripted-model';
const weatherTool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

async function clientOf(gateway: ReturnType<typeof createTestGateway>, options: { apiKey?: string; authToken?: string } = { apiKey: 'none' }) {
  return new Anthropic({ baseURL: await gateway.url(), maxRetries: 0, ...options });
}

describe('POST /v1/messages with the official Anthropic client', () => {
  it('answers messages.create with system blocks, thinking and stop sequences accepted, and records the turn', async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    const { data, response } = await client.messages
      .create({
        model,
        max_tokens: 64,
        system: [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Answer in English.' }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
        thinking: { type: 'enabled', budget_tokens: 32 },
        stop_sequences: ['there'],
        // Older clients send sampling fields that this SDK's types no longer name; they are honoured.
        ...({ temperature: 0.3 } as object),
      })
      .withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'echo: hello ' }]);
    expect(data.stop_reason).toBe('end_turn');
    expect(data.usage.output_tokens).toBe('echo: hello '.length);
    const turnId = response.headers.get('x-clawrl-turn-id') ?? '';
    expect(data.id).toBe(`msg_${turnId}`);
    const turn = await gateway.store.getTurn(turnId);
    expect(turn?.messages).toEqual([
      { role: 'system', content: 'You are terse.\n\nAnswer in English.' },
      { role: 'user', content: 'hello there' },
    ]);
    expect(turn?.sampling).toMatchObject({ maxTokens: 64, temperature: 0.3, stop: ['there'] });
  });

  it("streams Anthropic's event sequence, which messages.stream reassembles", async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    const stream = client.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'stream me' }] });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(text).toBe('echo: stream me');
    expect(final.content).toEqual([{ type: 'text', text: 'echo: stream me' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBe('echo: stream me'.length);
    expect(final.usage.input_tokens).toBeGreaterThan(0);
    expect([...new Set(types)]).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect((await gateway.store.getTurn(final.id.slice('msg_'.length)))?.status).toBe('completed');
  });

  it.each([false, true])('round-trips a tool use (stream %s) in one session, the tool result linked as next state', async (streamed) => {
    const gateway = createTestGateway({ engine: createWeatherAgentEngine('toolu_1') });
    const client = await clientOf(gateway);
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'what is the weather in Paris?' }];
    const request = { model, max_tokens: 64, tools: [weatherTool], tool_choice: { type: 'auto' as const }, messages };
    const first = streamed ? await client.messages.stream(request).finalMessage() : await client.messages.create(request);
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    const second = await client.messages.create({
      ...request,
      messages: [
        ...messages,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'It is sunny there.' }]);
    const firstTurn = await gateway.store.getTurn(first.id.slice('msg_'.length));
    const secondTurn = await gateway.store.getTurn(second.id.slice('msg_'.length));
    expect(secondTurn?.sessionId).toBe(firstTurn?.sessionId);
    expect(firstTurn?.nextState).toEqual([{ role: 'tool', content: 'sunny', toolCallId: 'toolu_1' }]);
    expect(secondTurn?.messages[1]).toEqual({
      role: 'assistant',
      content: 'Let me look.',
      toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
  });

  it('reports an engine failure mid-stream as an error event and records the turn as failed', async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    gateway.engine.failNextMidStream = new ClawrlError('upstream_error', 'the engine fell over');
    const stream = client.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'fail me' }] });
    const error = await stream.finalMessage().catch((caught: unknown) => caught);
    expect(String(error)).toContain('the engine fell over');
    const [turnId] = await gateway.store.listTurnIds();
    expect((await gateway.store.getTurn(turnId ?? ''))?.status).toBe('failed');
  });

  it('keeps thinking blocks sent back by the client for the record, apart from the reply', async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    const first = await client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'one' }] });
    const second = await client.messages.create({
      model,
      max_tokens: 64,
      messages: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'They said one.', signature: 'sig' }, ...first.content] as Anthropic.ContentBlockParam[] },
        { role: 'user', content: 'two' },
      ],
    });
    const secondTurn = await gateway.store.getTurn(second.id.slice('msg_'.length));
    // The thinking block's signature is no part of the reply, but the record keeps it as sent.
    expect(secondTurn?.messages[1]).toEqual({ role: 'assistant', content: 'echo: one', reasoning: 'They said one.', providerFields: [{ from: 'content[0]', signature: 'sig' }] });
    expect((await gateway.store.getTurn(first.id.slice('msg_'.length)))?.nextState).toEqual([{ role: 'user', content: 'two' }]);
  });

  it("keeps what it does not read for the record: Claude Code's cache_control on system and content blocks", async () => {
    const gateway = createTestGateway();
    const response = await gateway.chat(
      {
        model,
        max_tokens: 8,
        system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
      },
      { 'anthropic-version': '2023-06-01' },
      '/v1/messages',
    );
    const turn = await gateway.store.getTurn(response.headers.get('x-clawrl-turn-id') ?? '');
    expect(turn?.messages).toEqual([
      { role: 'system', content: 'You are Claude Code.', providerFields: [{ from: 'system[0]', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: 'hi', providerFields: [{ from: 'content[0]', cache_control: { type: 'ephemeral' } }] },
    ]);
  });

  it('counts tokens with the engine, records nothing, and serves the beta client (?beta=true, anthropic-beta)', async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    const counted = await client.messages.countTokens({ model, messages: [{ role: 'user', content: 'count me' }], system: 'sys' });
    // The scripted engine's prompt ids are one per character of `role:content` joined by `|`.
    expect(counted.input_tokens).toBe('system:sys|user:count me'.length);
    const beta = await client.beta.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'beta' }], betas: ['interleaved-thinking-2025-05-14'] });
    expect(beta.content).toEqual([{ type: 'text', text: 'echo: beta' }]);
    expect(await gateway.store.counts()).toMatchObject({ turns: { main: 1 } });
  });

  it("authenticates x-api-key and Authorization: Bearer, and refuses a bad key in Anthropic's shape", async () => {
    const gateway = createTestGateway({ apiKeys: [{ tenant: 'alice', key: 'key-a' }] });
    const byApiKey = await clientOf(gateway, { apiKey: 'key-a' });
    const byBearer = await clientOf(gateway, { authToken: 'key-a' });
    for (const client of [byApiKey, byBearer]) {
      const answer = await client.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
      expect((await gateway.store.getTurn(answer.id.slice('msg_'.length)))?.tenant).toBe('alice');
    }
    const wrong = await clientOf(gateway, { apiKey: 'key-b' });
    const error = await wrong.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((error as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it("takes Claude Code's mid-conversation system messages in place, and offers the model no server tools", async () => {
    const gateway = createTestGateway();
    const response = await gateway.chat(
      {
        model,
        max_tokens: 8,
        tools: [
          { name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } },
          { type: 'web_search_20250305', name: 'web_search' },
        ],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          { role: 'system', content: 'Available agent types: none.' },
        ],
      },
      { 'anthropic-version': '2023-06-01' },
      '/v1/messages',
    );
    expect(response.status).toBe(200);
    const turn = await gateway.store.getTurn(response.headers.get('x-clawrl-turn-id') ?? '');
    expect(turn?.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'Available agent types: none.' },
    ]);
    expect(turn?.tools.map((tool) => tool.name)).toEqual(['Bash']);
  });

  it.each([
    ['no max_tokens', { model, messages: [{ role: 'user', content: 'hi' }] }, 400, 'max_tokens'],
    ['an image block', { model, max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } }] }] }, 400, 'text only'],
    ['an unknown model', { model: 'claude-nope', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }, 404, "model 'claude-nope'"],
    ['invalid JSON', '{"model":', 400, 'not valid JSON'],
  ])("rejects %s in Anthropic's error shape", async (_name, body, status, mentions) => {
    const gateway = createTestGateway();
    const response = await gateway.chat(body, { 'anthropic-version': '2023-06-01' }, '/v1/messages');
    expect(response.status).toBe(status);
    const error = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(error.type).toBe('error');
    expect(error.error.type).toBe(status === 404 ? 'not_found_error' : 'invalid_request_error');
    expect(error.error.message).toContain(mentions);
  });

  it('raises a bad request as the client’s BadRequestError', async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    const error = await client.messages.create({ model, max_tokens: 0, messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ error: { type: 'invalid_request_error' } });
  });
});
