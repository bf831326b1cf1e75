import { describe, expect, it } from 'vitest';
import type { GenerateEvent, GenerateRequest, InferenceEngine } from '../spec/inference-engine.js';
import { createPolicyJudgeModel } from './create-policy-judge-model.js';

/** An engine that answers choice i with `answer i`, streamed in two pieces, and records requests. */
function choicesEngine(): InferenceEngine & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  return {
    engineId: 'choices', modelId: 'm', contextLength: undefined, requests,
    capabilities: { tokenIds: true, scoring: false, policyLoading: false },
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
});
