import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../../../spec/clawrl-error.js';
import { createTestGateway } from '../../testing/create-test-gateway.js';
import { createWeatherAgentEngine } from '../../testing/scripted-inference-engine.js';

const model = 'scripted-model';
const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

async function clientOf(gateway: ReturnType<typeof createTestGateway>, apiKey = 'none') {
  return new OpenAI({ baseURL: `${await gateway.url()}/v1`, apiKey, maxRetries: 0 });
}

describe('POST /v1/responses with the official openai client', () => {
  it('answers a string input with instructions and records the turn under the response id', async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    const { data, response } = await client.responses
      .create({ model, input: 'hello there', instructions: 'Be brief.', max_output_tokens: 64, temperature: 0.5 })
      .withResponse();
    expect(data.output_text).toBe('echo: hello there');
    expect(data.status).toBe('completed');
    expect(data.usage?.output_tokens).toBe('echo: hello there'.length);
    const turnId = response.headers.get('x-clawrl-turn-id') ?? '';
    expect(data.id).toBe(`resp_${turnId}`);
    const turn = await gateway.store.getTurn(turnId);
    expect(turn?.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello there' },
    ]);
    expect(turn?.sampling).toMatchObject({ maxTokens: 64, temperature: 0.5 });
    expect(turn?.responseTokenIds).toHaveLength('echo: hello there'.length);
  });

  it('streams the Responses event sequence, which the client reassembles', async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    const stream = client.responses.stream({ model, input: [{ role: 'user', content: [{ type: 'input_text', text: 'stream me' }] }] });
    const types: string[] = [];
    const sequence: number[] = [];
    let deltas = '';
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
    }
    const final = await stream.finalResponse();
    expect(deltas).toBe('echo: stream me');
    expect(final.output_text).toBe('echo: stream me');
    expect(final.usage?.total_tokens).toBeGreaterThan(0);
    expect([...new Set(types)]).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(sequence).toEqual(sequence.map((_, index) => index));
    const turn = await gateway.store.getTurn(final.id.slice('resp_'.length));
    expect(turn?.status).toBe('completed');
  });

  it('reports an engine failure mid-stream as an error event and records the turn as failed', async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    gateway.engine.failNextMidStream = new ClawrlError('upstream_error', 'the engine fell over');
    const error = await client.responses
      .stream({ model, input: 'fail me' })
      .finalResponse()
      .catch((caught: unknown) => caught);
    // The client rejects with the stream's `error` event itself.
    expect(error).toMatchObject({ type: 'error', code: 'upstream_error', message: 'the engine fell over' });
    const [turnId] = await gateway.store.listTurnIds();
    expect((await gateway.store.getTurn(turnId ?? ''))?.status).toBe('failed');
  });

  it('ends a reply cut at max_output_tokens as incomplete, stream and not', async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    const cut = await client.responses.create({ model, input: 'a long question', max_output_tokens: 4 });
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output_text: 'echo' });
    const streamed = await client.responses.stream({ model, input: 'a long question', max_output_tokens: 4 }).finalResponse();
    expect(streamed).toMatchObject({ status: 'incomplete', output_text: 'echo' });
  });

  it.each([false, true])('round-trips a tool call (stream %s) and links the tool result as the next state', async (streamed) => {
    const gateway = createTestGateway({ engine: createWeatherAgentEngine('call_1') });
    const client = await clientOf(gateway);
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'what is the weather in Paris?' }];
    const types: string[] = [];
    let first: OpenAI.Responses.Response;
    if (streamed) {
      const stream = client.responses.stream({ model, input, tools: [weatherTool] });
      for await (const event of stream) types.push(event.type);
      first = await stream.finalResponse();
      expect(types).toContain('response.function_call_arguments.delta');
      expect(types.indexOf('response.function_call_arguments.done')).toBeLessThan(types.indexOf('response.completed'));
    } else {
      first = await client.responses.create({ model, input, tools: [weatherTool], tool_choice: 'auto' });
    }
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', call_id: 'call_1', arguments: '{"city":"Paris"}' });
    expect(first.output_text).toBe('Let me look.');
    // The client resends the whole conversation, with no session header and no previous_response_id.
    const second = await client.responses.create({
      model,
      tools: [weatherTool],
      input: [...input, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: 'call_1', output: 'sunny' }],
    });
    expect(second.output_text).toBe('It is sunny there.');
    const firstTurn = await gateway.store.getTurn(first.id.slice('resp_'.length));
    const secondTurn = await gateway.store.getTurn(second.id.slice('resp_'.length));
    expect(secondTurn?.sessionId).toBe(firstTurn?.sessionId);
    expect(firstTurn?.response.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    expect(firstTurn?.nextState).toEqual([{ role: 'tool', content: 'sunny', toolCallId: 'call_1' }]);
    expect(firstTurn?.tools).toEqual([{ name: 'get_weather', description: 'The weather in a city', parameters: weatherTool.parameters }]);
  });

  it('continues a stored response by previous_response_id: same session, its history first, next state linked', async () => {
    const gateway = createTestGateway();
    const client = await clientOf(gateway);
    const first = await client.responses.create({ model, instructions: 'Be kind.', input: 'first question' });
    const second = await client.responses.create({ model, instructions: 'Be kind.', input: 'second question', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    const firstTurn = await gateway.store.getTurn(first.id.slice('resp_'.length));
    const secondTurn = await gateway.store.getTurn(second.id.slice('resp_'.length));
    expect(secondTurn?.sessionId).toBe(firstTurn?.sessionId);
    expect(secondTurn?.messages).toEqual([
      { role: 'system', content: 'Be kind.' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'echo: first question' },
      { role: 'user', content: 'second question' },
    ]);
    expect(firstTurn?.nextState).toEqual([{ role: 'user', content: 'second question' }]);
  });

  it("refuses another tenant's response id and unknown ones as not found, in OpenAI's error shape", async () => {
    const gateway = createTestGateway({ apiKeys: [{ tenant: 'alice', key: 'key-a' }, { tenant: 'bob', key: 'key-b' }] });
    const alice = await clientOf(gateway, 'key-a');
    const bob = await clientOf(gateway, 'key-b');
    const first = await alice.responses.create({ model, input: 'private' });
    for (const id of [first.id, 'resp_nope', 'nope']) {
      const error = await bob.responses.create({ model, input: 'peek', previous_response_id: id }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ param: 'previous_response_id', type: 'not_found_error' });
    }
  });

  it("keeps what it does not read for the record: Codex's item ids and a reasoning item's encrypted content", async () => {
    const gateway = createTestGateway();
    const input = [
      { type: 'message', id: 'msg_1', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
      { type: 'message', id: 'msg_2', role: 'assistant', content: [{ type: 'output_text', text: 'hello', annotations: [] }] },
      { type: 'message', role: 'user', content: 'and?' },
    ];
    const response = await gateway.chat({ model, input }, {}, '/v1/responses');
    const turn = await gateway.store.getTurn(response.headers.get('x-clawrl-turn-id') ?? '');
    expect(turn?.messages).toEqual([
      { role: 'user', content: 'hi', providerFields: [{ from: 'input[0]', id: 'msg_1' }] },
      {
        role: 'assistant',
        content: 'hello',
        providerFields: [
          { from: 'input[2]', id: 'msg_2' },
          { from: 'input[2].content[0]', annotations: [] },
          { from: 'input[1]', id: 'rs_1', encrypted_content: 'opaque' },
        ],
      },
      { role: 'user', content: 'and?' },
    ]);
  });

  it("offers the model the function tools inside Codex's namespaces and none of the hosted tools, as Codex sends them", async () => {
    const gateway = createTestGateway();
    const tools = [
      { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
      { type: 'namespace', name: 'multi_agent_v1', description: 'sub-agents', tools: [{ type: 'function', name: 'close_agent', parameters: { type: 'object' } }] },
      { type: 'web_search', external_web_access: false },
    ];
    const response = await gateway.chat({ model, input: 'hi', tools }, {}, '/v1/responses');
    expect(response.status).toBe(200);
    const turnId = response.headers.get('x-clawrl-turn-id') ?? '';
    expect((await gateway.store.getTurn(turnId))?.tools.map((tool) => tool.name)).toEqual(['exec_command', 'close_agent']);
    const broken = await gateway.chat({ model, input: 'hi', tools: [{ type: 'namespace', name: 'x' }] }, {}, '/v1/responses');
    expect(broken.status).toBe(400);
  });

  it.each([
    ['an image part', { model, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] }, 'text only'],
    ['an unknown model', { model: 'gpt-9', input: 'hi' }, "model 'gpt-9'"],
    ['no input', { model }, 'input'],
    ['a JSON schema output format', { model, input: 'hi', text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } } } }, "text.format 'json_schema'"],
    ['a tool_choice naming no tool', { model, input: 'hi', tool_choice: { type: 'function', name: 'nope' } }, 'tool_choice'],
  ])('rejects %s with an OpenAI-style error', async (_name, body, mentions) => {
    const gateway = createTestGateway();
    const response = await gateway.chat(body, {}, '/v1/responses');
    expect(response.status).toBeGreaterThanOrEqual(400);
    const error = ((await response.json()) as { error: { message: string; type: string } }).error;
    expect(error.message).toContain(mentions);
    expect(await gateway.store.counts()).toMatchObject({ turns: { main: 0 } });
  });
});
