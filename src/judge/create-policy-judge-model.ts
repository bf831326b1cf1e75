/**
 * The `policy` judge backend: the served model judges, through the `InferenceEngine` seam. Judge
 * generations are not turns: they are neither recorded nor trained on.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine } from '../spec/inference-engine.js';
import type { JudgeModel } from './judge-model.js';

export function createPolicyJudgeModel(engine: InferenceEngine): JudgeModel {
  return async (request, signal) => {
    const events = engine.generate(
      {
        messages: request.messages,
        tools: [],
        toolChoice: 'none',
        sampling: { temperature: request.temperature, topP: 1, stop: [], n: 1, topLogprobs: 0, maxTokens: request.maxTokens },
      },
      signal,
    );
    let streamed = '';
    for await (const event of events) {
      if (event.type === 'text-delta' && event.choiceIndex === 0) streamed += event.text;
      if (event.type === 'end') return event.result.choices[0]?.message.content ?? streamed;
    }
    throw new ClawrlError('upstream_error', 'the policy engine ended the judge generation without a result', { retryable: true });
  };
}
