/**
 * SGLang takes a seed as `sampling_params.sampling_seed` and builds `SamplingParams(**sampling_params)`,
 * so any other key (OpenAI's `seed`) fails the request, as it does on the test server. The policy
 * judge seeds every vote, so a wrong key there would leave every turn unjudged.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createPolicyJudgeModel } from '../../judge/create-policy-judge-model.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import { startFakeVllmServer, type FakeVllmServer } from '../testing/fake-vllm-server.js';
import { createTestChatRenderer } from '../testing/test-chat-renderer.js';
import { createOpenAICompatibleEngine } from './create-openai-compatible-engine.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(samplingSeed: boolean): Promise<{ server: FakeVllmServer; engine: InferenceEngine; warnings: string[] }> {
  const server = await startFakeVllmServer({ mode: 'sglang', samplingSeed });
  const warnings: string[] = [];
  const logger: Logger = { info: () => undefined, error: () => undefined, warn: (message) => warnings.push(message) };
  const engine = createOpenAICompatibleEngine({ baseUrl: server.url, model: 'fake-model', flavor: 'sglang', timeoutMs: 5000, renderer: createTestChatRenderer(), logger });
  cleanups.push(async () => {
    await engine.close();
    await server.close();
  });
  return { server, engine, warnings };
}

const judgeRequest = (content: string) => ({ messages: [{ role: 'user' as const, content }], temperature: 0.6, maxTokens: 8, n: 3 });

/** A client's request with its own seed, as the gateway passes it on. */
async function clientReply(engine: InferenceEngine, seed: number): Promise<string | null | undefined> {
  const request = { messages: [{ role: 'user' as const, content: 'hello' }], tools: [], toolChoice: 'auto' as const, sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: 8, seed } };
  for await (const event of engine.generate(request, new AbortController().signal)) if (event.type === 'end') return event.result.choices[0]?.message.content;
  return undefined;
}

function samplingParamsOf(server: FakeVllmServer): Record<string, unknown>[] {
  return server.requests.filter((request) => request.path === '/generate').map((request) => (request.body as { sampling_params: Record<string, unknown> }).sampling_params);
}

describe('the sglang engine and sampling seeds', () => {
  it('sends a seed as sampling_seed, so the policy judge\'s seeded votes and a client\'s seed pass a server that refuses unknown sampling keys', async () => {
    const { server, engine, warnings } = await setUp(true);
    const refused = await fetch(`${server.url}/generate`, { method: 'POST', body: JSON.stringify({ input_ids: [1, 2], sampling_params: { max_new_tokens: 1, seed: 3 } }) });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { message: "Unexpected keyword argument 'seed'" } });

    const votes = await createPolicyJudgeModel(engine)(judgeRequest('judge this'), new AbortController().signal);
    expect(votes).toHaveLength(3);
    expect(await clientReply(engine, 7)).toEqual(expect.any(String));
    // After the refused request: the engine's one question whether the server takes sampling_seed, then the requests.
    const [, probe, ...sent] = samplingParamsOf(server);
    expect(probe).toEqual({ max_new_tokens: 0, temperature: 1, top_p: 1, sampling_seed: 0 });
    const seeds = sent.map((params) => params['sampling_seed']);
    expect(seeds).toEqual([seeds[0], Number(seeds[0]) + 1, Number(seeds[0]) + 2, 7]);
    expect(sent.every((params) => !('seed' in params))).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('on an SGLang without sampling_seed, asks once, then samples seeded requests without it and says so once', async () => {
    const { server, engine, warnings } = await setUp(false);
    const judge = createPolicyJudgeModel(engine);
    expect(await judge(judgeRequest('judge this'), new AbortController().signal)).toHaveLength(3);
    expect(await judge(judgeRequest('judge that'), new AbortController().signal)).toHaveLength(3);
    expect(await clientReply(engine, 7)).toEqual(expect.any(String));
    const sent = samplingParamsOf(server);
    expect(sent.filter((params) => 'sampling_seed' in params)).toEqual([{ max_new_tokens: 0, temperature: 1, top_p: 1, sampling_seed: 0 }]);
    expect(sent).toHaveLength(1 + 3 + 3 + 1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('has no sampling_seed');
  });
});
