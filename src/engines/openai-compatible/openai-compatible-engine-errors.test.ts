import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import { collectEvents, contractRequest, resultOf } from '../inference-engine.contract.js';
import { startFakeVllmServer, type FakeVllmServer, type FakeVllmServerOptions } from '../testing/fake-vllm-server.js';
import { createTestChatRenderer } from '../testing/test-chat-renderer.js';
import { createOpenAICompatibleEngine, type OpenAICompatibleEngineOptions } from './create-openai-compatible-engine.js';
import { UpstreamHttpError } from './upstream-client.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(
  serverOptions: FakeVllmServerOptions = {},
  engineOptions: Partial<OpenAICompatibleEngineOptions> = {},
): Promise<{ server: FakeVllmServer; engine: InferenceEngine }> {
  const server = await startFakeVllmServer(serverOptions);
  const engine = createOpenAICompatibleEngine({
    baseUrl: server.url,
    model: 'fake-model',
    flavor: 'vllm',
    timeoutMs: 2000,
    ...(serverOptions.mode === 'sglang' ? { flavor: 'sglang' as const, renderer: createTestChatRenderer() } : {}),
    ...engineOptions,
  });
  cleanups.push(async () => {
    await engine.close();
    await server.close();
  });
  return { server, engine };
}

const hello = contractRequest([{ role: 'user', content: 'Hello there' }]);

async function failure(promise: Promise<unknown>): Promise<ClawrlError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ClawrlError.isInstance(error)) throw new Error(`expected a ClawrlError, got ${String(error)}`);
  return error;
}

describe('openai-compatible engine: upstream failures', () => {
  it('maps HTTP 500 to a retryable upstream_error carrying status and message', async () => {
    const { engine } = await setUp({ failMode: 'http-500' });
    const error = await failure(collectEvents(engine, hello));
    expect(error.code).toBe('upstream_error');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('fake internal server error');
    expect(error.cause).toBeInstanceOf(UpstreamHttpError);
    expect((error.cause as UpstreamHttpError).status).toBe(500);
  });

  it('maps HTTP 429 to a retryable upstream_error and 404 to a non-retryable one', async () => {
    const { engine, server } = await setUp({ failMode: 'http-429' });
    expect((await failure(collectEvents(engine, hello))).retryable).toBe(true);
    server.setFailMode(null);
    const wrongModel = createOpenAICompatibleEngine({ baseUrl: server.url, model: 'no-such-model', flavor: 'vllm', timeoutMs: 2000 });
    const error = await failure(collectEvents(wrongModel, hello));
    expect(error.code).toBe('upstream_error');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('does not exist');
  });

  it('times out when the upstream never answers', async () => {
    const { engine } = await setUp({ failMode: 'hang' }, { timeoutMs: 150 });
    const error = await failure(collectEvents(engine, hello));
    expect(error.code).toBe('upstream_timeout');
    expect(error.retryable).toBe(true);
  });

  it('times out when the stream stalls after it started', async () => {
    const { engine } = await setUp({ failMode: 'stall-mid-stream' }, { timeoutMs: 150 });
    const events: string[] = [];
    const error = await failure(
      (async () => {
        for await (const event of engine.generate(hello, new AbortController().signal)) events.push(event.type);
      })(),
    );
    expect(error.code).toBe('upstream_timeout');
    expect(events[0]).toBe('start');
  });

  it('rejects malformed stream chunks as upstream_error', async () => {
    const { engine } = await setUp({ failMode: 'garbage' });
    const error = await failure(collectEvents(engine, hello));
    expect(error.code).toBe('upstream_error');
    expect(error.message).toContain('malformed');
  });

  it('reports a dropped connection as a retryable upstream_error', async () => {
    const { engine } = await setUp({ failMode: 'drop-mid-stream' });
    const error = await failure(collectEvents(engine, hello));
    expect(error.code).toBe('upstream_error');
    expect(error.retryable).toBe(true);
  });

  it('reports an unreachable server as upstream_error', async () => {
    const server = await startFakeVllmServer();
    const url = server.url;
    await server.close();
    const engine = createOpenAICompatibleEngine({ baseUrl: url, model: 'fake-model', flavor: 'vllm', timeoutMs: 2000 });
    expect((await failure(collectEvents(engine, hello))).code).toBe('upstream_error');
  });

  it('maps a context-length rejection to context_length_exceeded', async () => {
    const body = await readFile(new URL('./__fixtures__/vllm-error-context-length.json', import.meta.url), 'utf8');
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const engine = createOpenAICompatibleEngine({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      model: 'm',
      flavor: 'vllm',
      timeoutMs: 2000,
    });
    cleanups.push(() => engine.close());
    const error = await failure(collectEvents(engine, hello));
    expect(error.code).toBe('context_length_exceeded');
    expect(error.message).toContain('maximum context length is 32768');
  });
});

describe('openai-compatible engine: aborts', () => {
  for (const mode of ['vllm', 'sglang'] as const) {
    it(`cancels the upstream request on abort and the ${mode} server sees the disconnect`, async () => {
      const { engine, server } = await setUp({ mode, tokensPerSecond: 200 });
      const controller = new AbortController();
      const request = contractRequest([{ role: 'user', content: 'one two three four five '.repeat(20) }], { maxTokens: 200 });
      const events = [];
      for await (const event of engine.generate(request, controller.signal)) {
        events.push(event);
        if (event.type === 'tokens') controller.abort();
      }
      const result = resultOf(events);
      expect(result.choices[0]?.finishReason).toBe('aborted');
      expect(result.choices[0]?.responseTokenIds.length).toBeLessThan(20);
      await server.settled();
      const generation = server.requests.find((recorded) => recorded.path !== '/v1/models');
      expect(generation?.disconnected).toBe(true);
    });
  }

  it('cancels the upstream request when the consumer stops reading', async () => {
    const { engine, server } = await setUp({ tokensPerSecond: 200 });
    const request = contractRequest([{ role: 'user', content: 'one two three four five '.repeat(20) }], { maxTokens: 200 });
    for await (const event of engine.generate(request, new AbortController().signal)) if (event.type === 'tokens') break;
    await server.settled();
    expect(server.requests[0]?.disconnected).toBe(true);
  });

  it('ends with aborted choices when aborted before the upstream answered', async () => {
    const { engine } = await setUp({ latencyMs: 500 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const events = await collectEvents(engine, hello, controller.signal);
    expect(events.map((event) => event.type)).toEqual(['start', 'choice-end', 'end']);
    expect(resultOf(events).choices[0]?.finishReason).toBe('aborted');
  });
});

describe('openai-compatible engine: wire requests', () => {
  it('asks vLLM for token ids and log-probs, always streaming', async () => {
    const { engine, server } = await setUp();
    await collectEvents(engine, contractRequest([{ role: 'user', content: 'Hi' }], { topK: 5, seed: 3, topLogprobs: 2, stop: ['x'] }));
    expect(server.requests[0]?.body).toMatchObject({
      model: 'fake-model',
      logprobs: true,
      top_logprobs: 2,
      return_token_ids: true,
      stream: true,
      stream_options: { include_usage: true },
      top_k: 5,
      seed: 3,
      stop: ['x'],
      max_tokens: 48,
    });
  });

  it('sends plain OpenAI servers neither token-id extras nor top_k', async () => {
    const { engine, server } = await setUp({ mode: 'plain' }, { flavor: 'openai' });
    const result = resultOf(await collectEvents(engine, contractRequest([{ role: 'user', content: 'Hi' }], { topK: 5 })));
    expect(result.trainable).toBe(false);
    expect(result.promptTokenIds).toEqual([]);
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body['return_token_ids']).toBeUndefined();
    expect(body['top_k']).toBeUndefined();
    expect(body['logprobs']).toBeUndefined();
  });

  it('translates tool calls and tool results to the wire', async () => {
    const { engine, server } = await setUp();
    await collectEvents(
      engine,
      contractRequest(
        [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"query":"Paris"}' }] },
          { role: 'tool', content: 'sunny', toolCallId: 'call_1' },
        ],
        {},
        { tools: [{ name: 'get_weather' }], toolChoice: { name: 'get_weather' } },
      ),
    );
    expect(server.requests[0]?.body).toMatchObject({
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"query":"Paris"}' } }] },
        { role: 'tool', content: 'sunny', tool_call_id: 'call_1' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather' } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
  });

  it('sends n parallel /generate requests to SGLang with distinct seeds', async () => {
    const { engine, server } = await setUp({ mode: 'sglang' });
    const result = resultOf(await collectEvents(engine, contractRequest([{ role: 'user', content: 'Hi' }], { n: 2, seed: 7 })));
    expect(result.choices).toHaveLength(2);
    // The first request asks whether the server takes sampling_seed (a generation of no tokens).
    const [, ...generations] = server.requests;
    const seeds = generations.map((recorded) => (recorded.body as { sampling_params: { sampling_seed: number } }).sampling_params.sampling_seed);
    expect(seeds.sort()).toEqual([7, 8]);
    expect(generations[0]?.body).toMatchObject({ return_logprob: true, stream: true, sampling_params: { stop_token_ids: [1] } });
  });

  it('scores through vLLM /v1/completions with prompt_logprobs and SGLang /generate with max_new_tokens 0', async () => {
    const vllm = await setUp();
    await vllm.engine.score({ prompt: { tokenIds: [10, 11, 12] }, responseTokenIds: [13, 14], topK: 3 });
    expect(vllm.server.requests[0]).toMatchObject({ path: '/v1/completions', body: { prompt: [10, 11, 12, 13, 14], max_tokens: 1, prompt_logprobs: 3 } });
    const sglang = await setUp({ mode: 'sglang' });
    const scored = await sglang.engine.score({ prompt: { tokenIds: [10, 11, 12] }, responseTokenIds: [13, 14] });
    expect(scored.logprobs).toHaveLength(2);
    expect(sglang.server.requests[0]).toMatchObject({ path: '/generate', body: { sampling_params: { max_new_tokens: 0 }, logprob_start_len: 2 } });
  });
});
