import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import { parseGenerationConfig, parseModelConfig } from './model-config.js';

// Trimmed copies of the published config.json files (fields the loader ignores removed).
const llama32Config = {
  architectures: ['LlamaForCausalLM'],
  attention_bias: false,
  bos_token_id: 128000,
  eos_token_id: [128001, 128008, 128009],
  head_dim: 64,
  hidden_act: 'silu',
  hidden_size: 2048,
  intermediate_size: 8192,
  max_position_embeddings: 131072,
  mlp_bias: false,
  model_type: 'llama',
  num_attention_heads: 32,
  num_hidden_layers: 16,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-5,
  rope_scaling: {
    factor: 32.0,
    high_freq_factor: 4.0,
    low_freq_factor: 1.0,
    original_max_position_embeddings: 8192,
    rope_type: 'llama3',
  },
  rope_theta: 500000.0,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  vocab_size: 128256,
};

const qwen25Config = {
  architectures: ['Qwen2ForCausalLM'],
  bos_token_id: 151643,
  eos_token_id: 151645,
  hidden_act: 'silu',
  hidden_size: 896,
  intermediate_size: 4864,
  max_position_embeddings: 32768,
  max_window_layers: 21,
  model_type: 'qwen2',
  num_attention_heads: 14,
  num_hidden_layers: 24,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: 32768,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  use_sliding_window: false,
  vocab_size: 151936,
};

const qwen3Config = {
  architectures: ['Qwen3ForCausalLM'],
  attention_bias: false,
  bos_token_id: 151643,
  eos_token_id: 151645,
  head_dim: 128,
  hidden_act: 'silu',
  hidden_size: 1024,
  intermediate_size: 3072,
  max_position_embeddings: 40960,
  model_type: 'qwen3',
  num_attention_heads: 16,
  num_hidden_layers: 28,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 1000000,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  vocab_size: 151936,
};

function errorOf(action: () => unknown): ClawrlError {
  try {
    action();
  } catch (error) {
    if (ClawrlError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ClawrlError');
}

describe('parseModelConfig', () => {
  it('reads a Llama 3.2 config with llama3 rope scaling and an eos list', () => {
    const config = parseModelConfig(llama32Config);
    expect(config).toEqual({
      family: 'llama',
      hiddenSize: 2048,
      intermediateSize: 8192,
      layerCount: 16,
      attentionHeadCount: 32,
      keyValueHeadCount: 8,
      headDimension: 64,
      rmsNormEpsilon: 1e-5,
      ropeTheta: 500000,
      ropeScaling: {
        type: 'llama3',
        factor: 32,
        lowFrequencyFactor: 1,
        highFrequencyFactor: 4,
        originalMaxPositionEmbeddings: 8192,
      },
      maxPositionEmbeddings: 131072,
      vocabularySize: 128256,
      tieWordEmbeddings: true,
      qkvBias: false,
      outputProjectionBias: false,
      mlpBias: false,
      qkNorm: false,
      bosTokenId: 128000,
      eosTokenIds: [128001, 128008, 128009],
      dtype: 'bfloat16',
    });
  });

  it('gives Qwen2 q/k/v biases without a config flag and derives head_dim', () => {
    const config = parseModelConfig(qwen25Config);
    expect(config.family).toBe('qwen2');
    expect(config.qkvBias).toBe(true);
    expect(config.outputProjectionBias).toBe(false);
    expect(config.qkNorm).toBe(false);
    expect(config.headDimension).toBe(64);
    expect(config.eosTokenIds).toEqual([151645]);
    expect(config.ropeScaling).toBeNull();
  });

  it('keeps the explicit Qwen3 head_dim that differs from hidden/heads and turns on q/k norm', () => {
    const config = parseModelConfig(qwen3Config);
    expect(config.headDimension).toBe(128);
    expect(config.hiddenSize / config.attentionHeadCount).toBe(64);
    expect(config.qkNorm).toBe(true);
    expect(config.qkvBias).toBe(false);
  });

  it('defaults key/value heads to attention heads, theta to 10000 and untied embeddings', () => {
    const { num_key_value_heads: _heads, rope_theta: _theta, tie_word_embeddings: _tie, ...rest } = qwen3Config;
    const config = parseModelConfig(rest);
    expect(config.keyValueHeadCount).toBe(16);
    expect(config.ropeTheta).toBe(10_000);
    expect(config.tieWordEmbeddings).toBe(false);
  });

  it('reads linear rope scaling under the older `type` key', () => {
    const config = parseModelConfig({ ...llama32Config, rope_scaling: { type: 'linear', factor: 2 } });
    expect(config.ropeScaling).toEqual({ type: 'linear', factor: 2 });
  });

  it('reads transformers 5 rope_parameters and dtype', () => {
    const { rope_theta: _theta, rope_scaling: _scaling, torch_dtype: _dtype, ...rest } = llama32Config;
    const config = parseModelConfig({
      ...rest,
      dtype: 'float32',
      rope_parameters: { rope_type: 'default', rope_theta: 250000 },
    });
    expect(config.ropeTheta).toBe(250000);
    expect(config.ropeScaling).toBeNull();
    expect(config.dtype).toBe('float32');
  });

  it('turns attention_bias on for q/k/v and o on Llama', () => {
    const config = parseModelConfig({ ...llama32Config, attention_bias: true });
    expect(config.qkvBias).toBe(true);
    expect(config.outputProjectionBias).toBe(true);
  });

  it('names the missing field', () => {
    const { hidden_size: _hidden, ...rest } = qwen3Config;
    const error = errorOf(() => parseModelConfig(rest));
    expect(error.code).toBe('configuration_error');
    expect(error.param).toBe('hidden_size');
    expect(error.message).toContain('hidden_size');
  });

  it('rejects an unsupported model type by name', () => {
    const error = errorOf(() => parseModelConfig({ ...qwen3Config, model_type: 'mistral' }));
    expect(error.param).toBe('model_type');
  });

  it('rejects a wrong type with the field path', () => {
    const error = errorOf(() => parseModelConfig({ ...qwen3Config, rms_norm_eps: '1e-6' }));
    expect(error.param).toBe('rms_norm_eps');
  });

  it('rejects heads that are not a multiple of key/value heads', () => {
    const error = errorOf(() => parseModelConfig({ ...qwen3Config, num_key_value_heads: 3 }));
    expect(error.param).toBe('num_key_value_heads');
  });

  it('rejects an unknown rope scaling type and llama3 scaling without its original length', () => {
    expect(errorOf(() => parseModelConfig({ ...llama32Config, rope_scaling: { rope_type: 'yarn', factor: 4 } })).param).toBe(
      'rope_scaling',
    );
    const { original_max_position_embeddings: _original, ...scaling } = llama32Config.rope_scaling;
    expect(errorOf(() => parseModelConfig({ ...llama32Config, rope_scaling: scaling })).param).toBe(
      'rope_scaling.original_max_position_embeddings',
    );
  });

  it('rejects a non-object', () => {
    expect(errorOf(() => parseModelConfig('nope')).code).toBe('configuration_error');
  });
});

describe('parseGenerationConfig', () => {
  it('reads the eos list and sampling defaults', () => {
    const config = parseGenerationConfig({
      bos_token_id: 151643,
      do_sample: true,
      eos_token_id: [151645, 151643],
      pad_token_id: 151643,
      repetition_penalty: 1.05,
      temperature: 0.7,
      top_k: 20,
      top_p: 0.8,
      transformers_version: '4.37.0',
    });
    expect(config).toEqual({
      eosTokenIds: [151645, 151643],
      bosTokenId: 151643,
      padTokenId: 151643,
      doSample: true,
      temperature: 0.7,
      topP: 0.8,
      topK: 20,
      repetitionPenalty: 1.05,
    });
  });

  it('names a bad field', () => {
    expect(errorOf(() => parseGenerationConfig({ eos_token_id: 'x' })).param).toBe('eos_token_id');
  });
});
