import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgePromptVersion } from '../core/judge-prompts.js';
import { startFakeVllmServer, type FakeVllmServer } from '../engines/testing/fake-vllm-server.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import { chatCompletionsUrlOf, createOpenAIJudgeModel, openAIJudgeContextWindow } from './create-openai-judge-model.js';
import { createPrmJudge } from './create-prm-judge.js';

async function failureOf(promise: Promise<unknown>): Promise<ClawrlError> {
  const error: unknown = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  if (!ClawrlError.isInstance(error)) throw new Error(`expected a ClawrlError, got ${String(error)}`);
  return error;
}

describe('the openai judge backend against a vLLM-shaped server', () => {
  let server: FakeVllmServer;

  beforeAll(async () => {
    server = await startFakeVllmServer({ model: 'judge-model', maxModelLength: 16_384 });
  });

  afterAll(async () => {
    await server.close();
  });

  it('builds the chat-completions URL with or without /v1', () => {
    expect(chatCompletionsUrlOf('http://host:8000')).toBe('http://host:8000/v1/chat/completions');
    expect(chatCompletionsUrlOf('http://host:8000/v1/')).toBe('http://host:8000/v1/chat/completions');
  });

  it('judges through the endpoint: m votes at temperature 0.6 and hint answers', async () => {
    const judge = createPrmJudge({
      judgeId: 'openai',
      modelName: 'judge-model',
      model: createOpenAIJudgeModel({ baseUrl: server.url, model: 'judge-model', apiKey: 'secret-key' }),
      maxTokens: 4_000,
    });
    const before = server.requests.length;
    // The fake model echoes the prompt, so the last box it "writes" is the one in the next state.
    const result = await judge.judge(
      {
        context: [{ role: 'user', content: 'What is 2+3?' }],
        response: { role: 'assistant', content: '5' },
        nextState: [{ role: 'user', content: 'ok \\boxed{1} [HINT_START]Answer with the number only.[HINT_END]' }],
        wantHint: true,
      },
      AbortSignal.timeout(10_000),
    );
    // The verdict is positive, so the hints the votes gave are not kept (create-prm-judge.ts).
    expect(result).toMatchObject({
      score: 1,
      hint: null,
      hintCandidates: [],
      judgeModel: 'judge-model',
      promptVersion: judgePromptVersion,
    });
    expect(result.votes.map((vote) => [vote.kind, vote.score])).toEqual([
      ['verdict', 1],
      ['verdict', 1],
      ['verdict', 1],
      ['hint', 1],
      ['hint', 1],
      ['hint', 1],
    ]);
    const sent = server.requests.slice(before).map((request) => request.body as Record<string, unknown>);
    expect(sent).toHaveLength(6);
    expect(sent.every((body) => body.model === 'judge-model' && body.temperature === 0.6 && body.max_tokens === 4_000)).toBe(true);
  });

  it('throws retryable errors for server errors and garbage, and a time-out for a hung server', async () => {
    const model = createOpenAIJudgeModel({ baseUrl: `${server.url}/v1`, model: 'judge-model', timeoutMs: 200 });
    const request = { messages: [{ role: 'user' as const, content: 'hi' }], temperature: 0.6, maxTokens: 16, n: 1 };
    try {
      server.setFailMode('http-500');
      expect(await failureOf(model(request, new AbortController().signal))).toMatchObject({ code: 'upstream_error', retryable: true });
      server.setFailMode('garbage');
      expect(await failureOf(model(request, new AbortController().signal))).toMatchObject({ code: 'upstream_error', retryable: true });
      server.setFailMode('hang');
      expect(await failureOf(model(request, new AbortController().signal))).toMatchObject({ code: 'upstream_timeout', retryable: true });
    } finally {
      server.setFailMode(null);
    }
    const unknownModel = createOpenAIJudgeModel({ baseUrl: server.url, model: 'missing-model' });
    expect(await failureOf(unknownModel(request, new AbortController().signal))).toMatchObject({ code: 'upstream_error', retryable: false });
    expect(await model(request, new AbortController().signal)).toEqual(['You said: hi']);
    expect(await model({ ...request, n: 3 }, new AbortController().signal)).toEqual(['You said: hi', 'You said: hi', 'You said: hi']);
  });

  it("takes the judge model's context window from /v1/models, else the default", async () => {
    const signal = new AbortController().signal;
    expect((await openAIJudgeContextWindow({ baseUrl: server.url, model: 'judge-model' })(signal)).tokens).toBe(16_384);
    expect((await openAIJudgeContextWindow({ baseUrl: `${server.url}/v1`, model: 'judge-model' })(signal)).tokens).toBe(16_384);
    // A model the endpoint does not list (or an endpoint that reports no length) gets the default.
    expect((await openAIJudgeContextWindow({ baseUrl: server.url, model: 'other-model' })(signal)).tokens).toBe(32_768);
    expect((await openAIJudgeContextWindow({ baseUrl: server.url, model: 'other-model', defaultTokens: 8_192 })(signal)).tokens).toBe(8_192);
    // An endpoint that cannot be reached is asked again later rather than guessed for good.
    const unreachable = await failureOf(openAIJudgeContextWindow({ baseUrl: 'http://127.0.0.1:1', model: 'judge-model' })(signal));
    expect(unreachable).toMatchObject({ code: 'upstream_error', retryable: true });
  });

  it('throws a retryable error when the endpoint is unreachable', async () => {
    const model = createOpenAIJudgeModel({ baseUrl: 'http://127.0.0.1:1', model: 'judge-model' });
    const error = await failureOf(model({ messages: [{ role: 'user', content: 'hi' }], temperature: 0.6, maxTokens: 16, n: 1 }, new AbortController().signal));
    expect(error).toMatchObject({ code: 'upstream_error', retryable: true });
  });
});
