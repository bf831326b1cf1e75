/**
 * The built-in model's architecture and its Hugging Face `config.json` / `generation_config.json`,
 * plus the random initialization it starts from (GPT-2 / Llama style: normal(0, 0.02) weights,
 * output projections scaled down by √(2·layers) so the residual stream does not grow with depth,
 * RMSNorm weights at 1).
 */
import { createSeededRandom } from '../../core/seeded-random.js';
import type { FloatTensorData } from '../../model/safetensors.js';
import { expectedTensorShapes } from '../../model/transformer-parameters.js';
import { transformerShapeFromHuggingFaceConfig, type TransformerShape } from '../../model/transformer-shape.js';

export interface BuiltinArchitecture {
  vocabularySize: number;
  hiddenSize: number;
  intermediateSize: number;
  layerCount: number;
  headCount: number;
  keyValueHeadCount: number;
  maxPositionEmbeddings: number;
}

/** The shipped shape: the spike's 3.7M-parameter Llama with a 1536-token vocabulary and a 1024 context. */
export const builtinArchitecture: BuiltinArchitecture = {
  vocabularySize: 1536,
  hiddenSize: 256,
  intermediateSize: 768,
  layerCount: 4,
  headCount: 4,
  keyValueHeadCount: 4,
  maxPositionEmbeddings: 1024,
};

/** A test-sized shape for the fast end-to-end check. */
export const tinyTestArchitecture: BuiltinArchitecture = {
  vocabularySize: 384,
  hiddenSize: 32,
  intermediateSize: 64,
  layerCount: 2,
  headCount: 2,
  keyValueHeadCount: 2,
  maxPositionEmbeddings: 1024,
};

export interface SpecialTokenIdsForConfig {
  endOfText: number;
  imEnd: number;
}

export function builtinConfigJson(architecture: BuiltinArchitecture, tokens: SpecialTokenIdsForConfig): Record<string, unknown> {
  return {
    architectures: ['LlamaForCausalLM'],
    attention_bias: false,
    attention_dropout: 0,
    bos_token_id: tokens.endOfText,
    eos_token_id: tokens.imEnd,
    head_dim: architecture.hiddenSize / architecture.headCount,
    hidden_act: 'silu',
    hidden_size: architecture.hiddenSize,
    initializer_range: 0.02,
    intermediate_size: architecture.intermediateSize,
    max_position_embeddings: architecture.maxPositionEmbeddings,
    mlp_bias: false,
    model_type: 'llama',
    num_attention_heads: architecture.headCount,
    num_hidden_layers: architecture.layerCount,
    num_key_value_heads: architecture.keyValueHeadCount,
    pad_token_id: tokens.endOfText,
    pretraining_tp: 1,
    rms_norm_eps: 1e-5,
    rope_scaling: null,
    rope_theta: 10000,
    tie_word_embeddings: true,
    torch_dtype: 'float32',
    transformers_version: '4.46.0',
    use_cache: true,
    vocab_size: architecture.vocabularySize,
  };
}

export function builtinGenerationConfigJson(tokens: SpecialTokenIdsForConfig): Record<string, unknown> {
  return {
    bos_token_id: tokens.endOfText,
    eos_token_id: [tokens.imEnd, tokens.endOfText],
    pad_token_id: tokens.endOfText,
    do_sample: true,
    temperature: 0.7,
    top_p: 0.95,
    transformers_version: '4.46.0',
  };
}

export function builtinShape(architecture: BuiltinArchitecture, tokens: SpecialTokenIdsForConfig): TransformerShape {
  return transformerShapeFromHuggingFaceConfig(builtinConfigJson(architecture, tokens));
}

/** Box-Muller over the seeded generator: deterministic across machines. */
function normalSampler(seed: number | string): () => number {
  const random = createSeededRandom(seed);
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const value = spare;
      spare = null;
      return value;
    }
    const first = Math.max(random.next(), 1e-12);
    const second = random.next();
    const radius = Math.sqrt(-2 * Math.log(first));
    spare = radius * Math.sin(2 * Math.PI * second);
    return radius * Math.cos(2 * Math.PI * second);
  };
}

export function initialWeights(shape: TransformerShape, seed: number | string): Map<string, FloatTensorData> {
  const normal = normalSampler(seed);
  const residualScale = 1 / Math.sqrt(2 * shape.layerCount);
  const weights = new Map<string, FloatTensorData>();
  for (const [name, tensorShape] of expectedTensorShapes(shape)) {
    const size = tensorShape.reduce((product, dimension) => product * dimension, 1);
    const data = new Float32Array(size);
    if (name.endsWith('norm.weight')) data.fill(1);
    else {
      const scale = name.endsWith('o_proj.weight') || name.endsWith('down_proj.weight') ? 0.02 * residualScale : 0.02;
      for (let index = 0; index < size; index += 1) data[index] = normal() * scale;
    }
    weights.set(name, { shape: tensorShape, data });
  }
  return weights;
}
