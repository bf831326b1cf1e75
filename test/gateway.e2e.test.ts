/**
 * The real server, started as a user starts it, driven by the official `openai` client, in front of
 * a vLLM-shaped upstream speaking vLLM's exact wire format.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { startFakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { useClawrlOnFakeVllm } from './testing/clawrl-on-fake-vllm.js';
import { startClawrlServer } from './testing/start-clawrl-server.js';

const running = useClawrlOnFakeVllm();

describe('gateway end to end with the official openai client', () => {
  it('lists the model and answers non-streaming requests with exact ids recorded', async () => {
    const client = new OpenAI({ baseURL: `${running.server.url}/v1`, apiKey: 'none' });
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toContain('fake-model');
    const { data, response } = await client.chat.completions
      .create({ model: 'fake-model', messages: [{ role: 'user', content: 'hello one two' }], logprobs: true })
      .withResponse();
    expect(data.choices[0]?.message.content).toContain('hello');
    const turnId = response.headers.get('x-clawrl-turn-id') ?? '';
    expect(response.headers.get('x-clawrl-policy-version')).toBe('0');
    const turn = await running.adminTurn(turnId);
    const upstreamBody = running.upstream.requests.at(-1)?.body as { return_token_ids?: boolean };
    expect(upstreamBody.return_token_ids).toBe(true);
    expect((turn.promptTokenIds as number[]).length).toBeGreaterThan(0);
    expect((turn.responseTokenIds as number[]).length).toBe((turn.logprobs as number[]).length);
    expect(turn.logprobs).toEqual(data.choices[0]?.logprobs?.content?.map((entry) => entry.logprob));
  });

  it('streams token by token', async () => {
    const client = new OpenAI({ baseURL: `${running.server.url}/v1`, apiKey: 'none' });
    const stream = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'what is one and two and three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let usage: unknown = null;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content;
      if (piece) pieces.push(piece);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(pieces.length).toBeGreaterThan(3);
    expect(usage).toMatchObject({ completion_tokens: expect.any(Number) });
  });

  it('streams tool calls that the client reassembles', async () => {
    const client = new OpenAI({ baseURL: `${running.server.url}/v1`, apiKey: 'none' });
    const tools = [
      { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { query: { type: 'string' } } } } },
    ];
    const stream = client.chat.completions.stream({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'what is the weather in Paris' }],
      tools,
    });
    const completion = await stream.finalChatCompletion();
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('attributes sessions by header, by base-URL prefix and by the conversation alone', async () => {
    const byHeader = new OpenAI({ baseURL: `${running.server.url}/v1`, apiKey: 'none', defaultHeaders: { 'X-Session-Id': 'e2e-header' } });
    const first = await byHeader.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'one' }] }).withResponse();
    expect(first.response.headers.get('x-clawrl-session-id')).toBe('e2e-header');

    const byPrefix = new OpenAI({ baseURL: `${running.server.url}/s/e2e-prefix/v1`, apiKey: 'none' });
    const second = await byPrefix.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'two' }] }).withResponse();
    expect(second.response.headers.get('x-clawrl-session-id')).toBe('e2e-prefix');

    const plain = new OpenAI({ baseURL: `${running.server.url}/v1`, apiKey: 'none' });
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'hello three' },
    ];
    const turnOne = await plain.chat.completions.create({ model: 'fake-model', messages }).withResponse();
    const sessionId = turnOne.response.headers.get('x-clawrl-session-id');
    messages.push({ role: 'assistant', content: turnOne.data.choices[0]?.message.content ?? '' }, { role: 'user', content: 'and four?' });
    const turnTwo = await plain.chat.completions.create({ model: 'fake-model', messages }).withResponse();
    expect(turnTwo.response.headers.get('x-clawrl-session-id')).toBe(sessionId);
    const linked = await running.adminTurn(turnOne.response.headers.get('x-clawrl-turn-id') ?? '');
    expect(linked.nextState).toEqual([{ role: 'user', content: 'and four?' }]);
    const sessions = (await (await fetch(`${running.server.url}/admin/sessions`)).json()) as { data: Array<{ id: string; turnIds: string[] }> };
    expect(sessions.data.find((session) => session.id === sessionId)?.turnIds).toHaveLength(2);
  });

  it('returns OpenAI-style errors the client understands', async () => {
    const client = new OpenAI({ baseURL: `${running.server.url}/v1`, apiKey: 'none', maxRetries: 0 });
    await expect(client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 404,
    });
    await expect(client.chat.completions.create({ model: 'fake-model', messages: [] })).rejects.toMatchObject({ status: 400 });
    running.upstream.setFailMode('http-500');
    try {
      await expect(client.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
        status: 502,
      });
    } finally {
      running.upstream.setFailMode(null);
    }
  });

  it('aborts the upstream request when the client disconnects, and stores the turn as aborted', async () => {
    const slow = await startFakeVllmServer({ model: 'fake-model', tokensPerSecond: 20, autoToolChoice: true });
    const slowServer = await startClawrlServer(['--engine', 'vllm', '--upstream', slow.url, '--model', 'fake-model']);
    try {
      const controller = new AbortController();
      const response = await fetch(`${slowServer.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'one two three four five one two three four five' }] }),
        signal: controller.signal,
      });
      const turnId = response.headers.get('x-clawrl-turn-id') ?? '';
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      let turn: Record<string, unknown> | null = null;
      for (let attempt = 0; attempt < 100 && turn === null; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const found = await fetch(`${slowServer.url}/admin/turns/${turnId}`);
        if (found.status === 200) turn = (await found.json()) as Record<string, unknown>;
      }
      expect(turn).toMatchObject({ status: 'aborted', trainable: false });
      await slow.settled();
      // The first streamed one: the start-up check of tool calling asks once without streaming.
      const streamed = slow.requests.find((request) => request.path === '/v1/chat/completions' && (request.body as { stream?: unknown }).stream === true);
      expect(streamed?.disconnected).toBe(true);
    } finally {
      await slowServer.stop();
      await slow.close();
    }
  });
});
