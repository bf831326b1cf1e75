import { describe, expect, it } from 'vitest';
import { createScriptedInferenceEngine } from '../../testing/scripted-inference-engine.js';
import { createTestGateway, readEvents } from '../../testing/create-test-gateway.js';

const model = 'scripted-model';
const hello = { model, messages: [{ role: 'user', content: 'hi' }] };

describe('POST /v1/chat/completions', () => {
  it('answers non-streaming requests and records the turn exactly', async () => {
    const gateway = createTestGateway();
    const response = await gateway.chat({ ...hello, logprobs: true, top_logprobs: 1 });
    expect(response.status).toBe(200);
    const turnId = response.headers.get('x-clawrl-turn-id');
    expect(response.headers.get('x-clawrl-policy-version')).toBe('0');
    const body = (await response.json()) as {
      choices: Array<{ message: { content: string }; finish_reason: string; logprobs: { content: Array<{ token: string; logprob: number; top_logprobs: unknown[] }> } }>;
      usage: { completion_tokens: number; total_tokens: number; prompt_tokens: number };
    };
    expect(body.choices[0]?.message.content).toBe('echo: hi');
    expect(body.choices[0]?.finish_reason).toBe('stop');
    expect(body.choices[0]?.logprobs.content).toHaveLength(8);
    expect(body.choices[0]?.logprobs.content[0]?.top_logprobs).toHaveLength(1);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    const turn = await gateway.store.getTurn(turnId ?? '');
    expect(turn?.responseTokenIds).toHaveLength(8);
    expect(turn?.logprobs).toEqual(body.choices[0]?.logprobs.content.map((entry) => entry.logprob));
    expect(turn?.type).toBe('main');
    expect(turn?.trainable).toBe(true);
    expect(turn?.status).toBe('completed');
  });

  it('streams token by token and records before [DONE]', async () => {
    const gateway = createTestGateway();
    const response = await gateway.chat({ ...hello, stream: true, stream_options: { include_usage: true } });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const { events, done } = await readEvents(response);
    expect(done).toBe(true);
    const deltas = events.flatMap((event) => (event.choices as Array<{ delta: { content?: string } }>).map((choice) => choice.delta.content ?? ''));
    expect(deltas.filter((delta) => delta !== '').length).toBe(8);
    expect(deltas.join('')).toBe('echo: hi');
    expect(events.at(-1)?.usage).toMatchObject({ completion_tokens: 8 });
    const turn = await gateway.store.getTurn(response.headers.get('x-clawrl-turn-id') ?? '');
    expect(turn?.response.content).toBe('echo: hi');
  });

  it('streams tool calls as indexed deltas', async () => {
    const engine = createScriptedInferenceEngine({
      reply: () => ({ text: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] }),
    });
    const gateway = createTestGateway({ engine });
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const response = await gateway.chat({ ...hello, tools, stream: true });
    const { events } = await readEvents(response);
    const calls = events.flatMap((event) =>
      (event.choices as Array<{ delta: { tool_calls?: Array<{ index: number; id?: string; function: { name?: string; arguments: string } }> } }>).flatMap(
        (choice) => choice.delta.tool_calls ?? [],
      ),
    );
    expect(calls[0]).toMatchObject({ index: 0, id: 'call_1', function: { name: 'get_weather' } });
    expect(calls.map((call) => call.function.arguments).join('')).toBe('{"city":"Paris"}');
    const finish = events.flatMap((event) => (event.choices as Array<{ finish_reason: string | null }>).map((choice) => choice.finish_reason));
    expect(finish).toContain('tool_calls');
    const nonStream = await gateway.chat({ ...hello, tools });
    const body = (await nonStream.json()) as { choices: Array<{ message: { content: string | null; tool_calls: unknown[] } }> };
    expect(body.choices[0]?.message.content).toBeNull();
    expect(body.choices[0]?.message.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
  });

  it('samples n choices; extra choices are recorded as side turns', async () => {
    const engine = createScriptedInferenceEngine({ reply: (_request, index) => ({ text: `choice ${index}` }) });
    const gateway = createTestGateway({ engine });
    const response = await gateway.chat({ ...hello, n: 3 });
    const body = (await response.json()) as { choices: Array<{ index: number; message: { content: string } }> };
    expect(body.choices.map((choice) => choice.message.content)).toEqual(['choice 0', 'choice 1', 'choice 2']);
    const turnId = response.headers.get('x-clawrl-turn-id') ?? '';
    expect((await gateway.store.getTurn(`${turnId}-2`))?.type).toBe('side');
    expect((await gateway.store.getTurn(turnId))?.type).toBe('main');
  });

  it('honours max_tokens / max_completion_tokens and stop sequences', async () => {
    const gateway = createTestGateway();
    const limited = (await (await gateway.chat({ ...hello, max_completion_tokens: 3 })).json()) as { choices: Array<{ message: { content: string }; finish_reason: string }> };
    expect(limited.choices[0]).toMatchObject({ message: { content: 'ech' }, finish_reason: 'length' });
    const stopped = (await (await gateway.chat({ ...hello, stop: [':'] })).json()) as { choices: Array<{ message: { content: string } }> };
    expect(stopped.choices[0]?.message.content).toBe('echo');
    expect(gateway.engine.generateCalls.at(-1)?.sampling.stop).toEqual([':']);
  });

  it("samples what a request leaves out with the server's defaults, and what it names as named", async () => {
    const gateway = createTestGateway({ samplingDefaults: { temperature: 0.7, topP: 0.95, topK: 20 } });
    const defaulted = await gateway.chat(hello);
    expect(gateway.engine.generateCalls.at(-1)?.sampling).toMatchObject({ temperature: 0.7, topP: 0.95, topK: 20, maxTokens: 256 });
    const turn = await gateway.store.getTurn(defaulted.headers.get('x-clawrl-turn-id') ?? '');
    expect(turn?.sampling).toMatchObject({ temperature: 0.7, topP: 0.95, topK: 20 });
    await gateway.chat({ ...hello, temperature: 0, top_p: 1, top_k: -1 });
    const named = gateway.engine.generateCalls.at(-1)?.sampling;
    expect(named).toMatchObject({ temperature: 0, topP: 1 });
    expect(named?.topK).toBeUndefined();
  });

  it.each([
    ['malformed JSON', '{"model": ', 400, 'not valid JSON'],
    ['empty messages', { model, messages: [] }, 400, 'messages'],
    ['unknown role', { model, messages: [{ role: 'robot', content: 'x' }] }, 400, 'messages[0]'],
    ['wrong content type', { model, messages: [{ role: 'user', content: 42 }] }, 400, 'messages[0].content'],
    ['image content', { model, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, 400, 'image_url'],
    ['negative max_tokens', { ...hello, max_tokens: -1 }, 400, 'max_tokens'],
    ['out-of-range temperature', { ...hello, temperature: 3 }, 400, 'temperature'],
    ['invalid tool schema', { ...hello, tools: [{ type: 'function', function: { name: 'x', parameters: { type: 'string' } } }] }, 400, 'tools[0]'],
    ['bad tool name', { ...hello, tools: [{ type: 'function', function: { name: 'has space' } }] }, 400, 'tools[0].function.name'],
    ['unknown model', { ...hello, model: 'gpt-9' }, 404, 'gpt-9'],
  ])('rejects %s with an OpenAI-style error', async (_name, body, status, mentions) => {
    const gateway = createTestGateway();
    const response = await gateway.chat(body);
    expect(response.status).toBe(status);
    const error = (await response.json()) as { error: { message: string; type: string; code: string } };
    expect(error.error.message).toContain(mentions);
    expect(typeof error.error.type).toBe('string');
    expect(await gateway.store.counts()).toMatchObject({ turns: { main: 0, side: 0 } });
  });

  it('refuses bodies over the limit with 413', async () => {
    const gateway = createTestGateway({ limits: { bodyLimitBytes: 1000 } });
    const response = await gateway.chat({ model, messages: [{ role: 'user', content: 'x'.repeat(2000) }] });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('request_too_large');
  });

  it('maps engine failures to 502 and 504', async () => {
    const { ClawrlError } = await import('../../../spec/clawrl-error.js');
    const gateway = createTestGateway();
    gateway.engine.failNext = new ClawrlError('upstream_error', 'upstream said 500');
    expect((await gateway.chat(hello)).status).toBe(502);
    gateway.engine.failNext = new ClawrlError('upstream_timeout', 'no answer');
    expect((await gateway.chat(hello)).status).toBe(504);
  });

  it('limits concurrent requests per API key with 429', async () => {
    const gateway = createTestGateway({ apiKeys: [{ tenant: 'alice', key: 'alice-secret' }], limits: { concurrencyPerKey: 1 } });
    gateway.engine.tokenDelayMs = 20;
    const headers = { authorization: 'Bearer alice-secret' };
    const [first, second] = await Promise.all([gateway.chat(hello, headers), gateway.chat(hello, headers)]);
    expect([first.status, second.status].sort()).toEqual([200, 429]);
    expect((await gateway.chat(hello, headers)).status).toBe(200);
  });

  it('authenticates tenants and keeps the admin routes that are not tenant-readable for the admin key', async () => {
    const gateway = createTestGateway({ apiKeys: [{ tenant: 'alice', key: 'alice-secret' }], adminKey: 'admin-secret' });
    expect((await gateway.chat(hello)).status).toBe(401);
    expect((await gateway.chat(hello, { authorization: 'Bearer wrong-key' })).status).toBe(401);
    const ok = await gateway.chat(hello, { authorization: 'Bearer alice-secret' });
    expect(ok.status).toBe(200);
    const turn = await gateway.store.getTurn(ok.headers.get('x-clawrl-turn-id') ?? '');
    expect(turn?.tenant).toBe('alice');
    // A tenant reads its own status (tenant-scoped, `admin/tenant-scope.test.ts`); the rest of /admin needs the admin key.
    expect(await (await gateway.app.request('/admin/status', { headers: { authorization: 'Bearer alice-secret' } })).json()).toMatchObject({ tenant: 'alice' });
    expect((await gateway.app.request('/admin/policies', { headers: { authorization: 'Bearer alice-secret' } })).status).toBe(403);
    expect((await gateway.app.request('/admin/status', { headers: { authorization: 'Bearer admin-secret' } })).status).toBe(200);
  });

  it('keeps what it does not read of a message for the record, and the reply still links', async () => {
    const gateway = createTestGateway();
    const first = await gateway.chat({ model: 'scripted-model', messages: [{ role: 'user', content: 'hi' }] });
    const firstId = first.headers.get('x-clawrl-turn-id') ?? '';
    const reply = ((await first.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content ?? '';
    const second = await gateway.chat({
      model: 'scripted-model',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: reply, refusal: null, annotations: [] },
        { role: 'user', content: [{ type: 'text', text: 'more', cache_control: { type: 'ephemeral' } }] },
      ],
    });
    const turn = await gateway.store.getTurn(second.headers.get('x-clawrl-turn-id') ?? '');
    expect(turn?.messages[1]).toEqual({ role: 'assistant', content: reply, providerFields: [{ from: 'message', annotations: [] }] });
    expect(turn?.messages[2]).toEqual({ role: 'user', content: 'more', providerFields: [{ from: 'content[0]', cache_control: { type: 'ephemeral' } }] });
    expect((await gateway.store.getTurn(firstId))?.nextState).toEqual([{ role: 'user', content: 'more', providerFields: [{ from: 'content[0]', cache_control: { type: 'ephemeral' } }] }]);
  });

  it('refuses a forced tool call or structured output the engine cannot enforce, and passes them to one that can', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const asks = [
      [{ tools, tool_choice: 'required' }, 'tool_choice'],
      [{ tools, tool_choice: { type: 'function', function: { name: 'get_weather' } } }, 'tool_choice'],
      [{ response_format: { type: 'json_object' } }, 'response_format'],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } } }, 'response_format'],
    ] as const;
    const free = createTestGateway();
    for (const [ask, param] of asks) {
      const response = await free.chat({ model: 'scripted-model', messages: [{ role: 'user', content: 'hi' }], ...ask });
      expect(response.status).toBe(400);
      const error = ((await response.json()) as { error: { code: string; param: string; message: string } }).error;
      expect(error).toMatchObject({ code: 'unsupported', param });
      expect(error.message).toContain('cannot');
    }
    expect(await free.store.counts()).toMatchObject({ turns: { main: 0 } });
    const text = await free.chat({ model: 'scripted-model', messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: 'auto', response_format: { type: 'text' } });
    expect(text.status).toBe(200);

    const constrained = createTestGateway({ engine: createScriptedInferenceEngine({ constrained: true }) });
    for (const [ask] of asks) {
      const response = await constrained.chat({ model: 'scripted-model', messages: [{ role: 'user', content: 'hi' }], ...ask });
      expect(response.status).toBe(200);
    }
    const seen = constrained.engine.generateCalls.map((request) => [request.toolChoice, request.responseFormat?.type]);
    expect(seen).toEqual([['required', undefined], [{ name: 'get_weather' }, undefined], ['auto', 'json_object'], ['auto', 'json_schema']]);
  });
});
