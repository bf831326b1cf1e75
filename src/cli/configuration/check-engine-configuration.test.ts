import { describe, expect, it } from 'vitest';
import { checkEngineConfiguration, checkTrainedVersionServing } from './check-engine-configuration.js';

describe('checkTrainedVersionServing', () => {
  const judge = { judge: 'rules', judgeWeights: 'base' as const };

  it('refuses full-weight training on vLLM in one line, since vLLM would keep serving the base', () => {
    expect(() => checkTrainedVersionServing({ engine: 'vllm', noTrain: false, trainParams: 'full', ...judge })).toThrow(
      /^--engine vllm cannot serve full-weight versions \(--train-params full\) without a restart: train LoRA adapters/,
    );
  });

  it('lets LoRA on vLLM, full weights on SGLang and serving without training through', () => {
    expect(() => checkTrainedVersionServing({ engine: 'vllm', noTrain: false, trainParams: 'lora', ...judge })).not.toThrow();
    expect(() => checkTrainedVersionServing({ engine: 'sglang', noTrain: false, trainParams: 'full', ...judge })).not.toThrow();
    expect(() => checkTrainedVersionServing({ engine: 'vllm', noTrain: true, trainParams: 'full', ...judge })).not.toThrow();
    expect(() => checkTrainedVersionServing({ engine: 'sglang', noTrain: false, trainParams: 'full', judge: 'policy', judgeWeights: 'served' })).not.toThrow();
  });

  it('refuses full-weight training on SGLang with a policy judge pinned to the base weights, which SGLang no longer holds', () => {
    expect(() => checkTrainedVersionServing({ engine: 'sglang', noTrain: false, trainParams: 'full', judge: 'policy', judgeWeights: 'base' })).toThrow(
      /^--judge policy judges with the base weights, which SGLang no longer holds/,
    );
  });
});

describe('checkEngineConfiguration', () => {
  it('takes --upstream-admin-api-key only with --engine sglang, the one engine that tells an admin key from the API key', () => {
    const upstream = { model: 'Qwen3-4B', upstream: 'http://127.0.0.1:8000', upstreamAdminApiKey: 'admin-key' };
    expect(() => checkEngineConfiguration({ engine: 'vllm', ...upstream })).toThrow(/^--upstream-admin-api-key is for --engine sglang \(its --admin-api-key\); the vllm engine takes one key, --upstream-api-key\.$/);
    expect(() => checkEngineConfiguration({ engine: 'sglang', ...upstream })).not.toThrow();
  });
});
