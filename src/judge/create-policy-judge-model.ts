/**
 * The `policy` judge backend: the policy model judges, through the `InferenceEngine` seam, with
 * all votes of a prompt sampled as one request of `n` choices (the local engine samples them as a
 * batch over one prompt prefill). Judge generations are not turns: they are neither recorded nor
 * trained on.
 */
import { deriveSamplingSeed } from '../core/seeded-random.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine } from '../spec/inference-engine.js';
import type { JudgeModel } from './judge-model.js';

export interface PolicyJudgeOptions {
  /**
   * `base` judges with the base weights (version 0) while training moves the served version, as
   * OpenClaw-RL's PRM runs as its own, frozen server; `served` judges with whatever is served.
   * Engines that cannot load versions serve only the base anyway, so they are asked plainly.
   */
  weights: 'base' | 'served';
}

export function createPolicyJudgeModel(engine: InferenceEngine, options: PolicyJudgeOptions = { weights: 'base' }): JudgeModel {
  const pinBase = options.weights === 'base' && engine.capabilities.policyLoading;
  return async (request, signal) => {
    const events = engine.generate(
      {
        messages: request.messages,
        tools: [],
        toolChoice: 'none',
        sampling: {
          temperature: request.temperature,
          topP: 1,
          stop: [],
          n: request.n,
          topLogprobs: 0,
          maxTokens: request.maxTokens,
          // Seeded by the prompt: judging a turn twice gives the same votes, so a seeded experiment
          // (`eval personalize --seed`) repeats its judgements and not only its replies.
          seed: deriveSamplingSeed('policy-judge', JSON.stringify(request.messages)),
        },
        ...(pinBase ? { policyVersion: 0 } : {}),
      },
      signal,
    );
    const streamed: string[] = Array.from({ length: request.n }, () => '');
    for await (const event of events) {
      if (event.type === 'text-delta') streamed[event.choiceIndex] = (streamed[event.choiceIndex] ?? '') + event.text;
      if (event.type === 'end') {
        return streamed.map((text, index) => event.result.choices[index]?.message.content ?? text);
      }
    }
    throw new ClawrlError('upstream_error', 'the policy engine ended the judge generation without a result', { retryable: true });
  };
}
