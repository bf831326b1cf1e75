import { describe, expect, it } from 'vitest';
import { checkTrainedVersionServing } from './check-engine-configuration.js';

describe('checkTrainedVersionServing', () => {
  it('refuses full-weight training on vLLM in one line, since vLLM would keep serving the base', () => {
    expect(() => checkTrainedVersionServing({ engine: 'vllm', noTrain: false, trainParams: 'full' })).toThrow(
      /^--engine vllm cannot serve full-weight versions \(--train-params full\) without a restart: train LoRA adapters/,
    );
  });

  it('lets LoRA on vLLM, full weights on SGLang and serving without training through', () => {
    expect(() => checkTrainedVersionServing({ engine: 'vllm', noTrain: false, trainParams: 'lora' })).not.toThrow();
    expect(() => checkTrainedVersionServing({ engine: 'sglang', noTrain: false, trainParams: 'full' })).not.toThrow();
    expect(() => checkTrainedVersionServing({ engine: 'vllm', noTrain: true, trainParams: 'full' })).not.toThrow();
  });
});
