import { describe, expect, it } from 'vitest';
import type { GenerateEvent, GenerateRequest, InferenceEngine } from '../spec/inference-engine.js';
import { createPolicyJudgeModel } from './create-policy-judge-model.js';

/** An engine that answers choice i with `answer i`, streamed in two pieces, and records requests. */
function choicesEngine(policyLoading = false): InferenceEngine & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  return {
    engineId: 'choices', modelId: 'm', contextLength: undefined, requests,
    capabilities: { tokenIds: true, scoring: false, temperatureScoring: false, policyLoading, forcedToolChoice: false, responseFormats: [] },
    async *generate(request: GenerateRequest): AsyncIterable<GenerateEvent> {
      requests.push(request);
      const n = request.sampling.n;
      for (let index = 0; index < n; index += 1) yield { type: 'text-delta', choiceIndex: index, text: 'answer ' };
      for (let index = 0; index < n; index += 1) yield { type: 'text-delta', choiceIndex: index, text: String(index) };
      yield {
        type: 'end',
        result: {
          promptTokenIds: [], policyVersion: 0, trainable: true, usage: { promptTokens: 0, completionTokens: 0 },
          choices: Array.from({ length: n }, (_, index) => ({
            index, message: { role: 'assistant', content: `answer ${index}` }, toolCalls: [], responseTokenIds: [], logprobs: [], finishReason: 'stop',
          })),
        },
      };
    },
    score: () => Promise.reject(new Error('unused')),
    loadPolicy: () => Promise.reject(new Error('unused')),
    close: async () => undefined,
  } as InferenceEngine & { requests: GenerateRequest[] };
}

describe('createPolicyJudgeModel', () => {
  it('asks the engine for all votes in one request of n choices and returns them in choice order', async () => {
    const engine = choicesEngine();
    const model = createPolicyJudgeModel(engine);
    const answers = await model({ messages: [{ role: 'user', content: 'judge this' }], temperature: 0.6, maxTokens: 64, n: 3 }, new AbortController().signal);
    expect(answers).toEqual(['answer 0', 'answer 1', 'answer 2']);
    expect(engine.requests).toHaveLength(1);
    expect(engine.requests[0]?.sampling).toMatchObject({ n: 3, temperature: 0.6, maxTokens: 64 });
  });

  it('seeds the votes by the prompt: the same prompt twice, the same seed; another prompt, another', async () => {
    const engine = choicesEngine();
    const model = createPolicyJudgeModel(engine);
    const ask = (content: string) => model({ messages: [{ role: 'user', content }], temperature: 0.6, maxTokens: 64, n: 3 }, new AbortController().signal);
    await ask('judge this');
    await ask('judge this');
    await ask('judge that');
    const seeds = engine.requests.map((request) => request.sampling.seed);
    expect(Number.isInteger(seeds[0])).toBe(true);
    expect(seeds[1]).toBe(seeds[0]);
    expect(seeds[2]).not.toBe(seeds[0]);
  });

  it('judges with the base version by default where the engine loads versions, and with the served one when asked', async () => {
    const request = { messages: [{ role: 'user' as const, content: 'judge this' }], temperature: 0.6, maxTokens: 64, n: 1 };
    const loading = choicesEngine(true);
    await createPolicyJudgeModel(loading)(request, new AbortController().signal);
    await createPolicyJudgeModel(loading, { weights: 'served' })(request, new AbortController().signal);
    expect(loading.requests.map((sent) => sent.policyVersion)).toEqual([0, undefined]);
    // An engine that cannot load versions only ever serves the base: no pin to reject.
    const fixed = choicesEngine(false);
    await createPolicyJudgeModel(fixed)(request, new AbortController().signal);
    expect(fixed.requests[0]?.policyVersion).toBeUndefined();
  });
});
