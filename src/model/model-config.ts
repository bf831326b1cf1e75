/**
 * Hugging Face `config.json` and `generation_config.json` of the supported transformer families
 * (Llama, Qwen2, Qwen3), validated with zod and turned into one camelCase `ModelConfig` where the
 * family differences are explicit flags instead of `model_type` checks scattered through the
 * forward pass.
 */
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';

export type ModelFamily = 'llama' | 'qwen2' | 'qwen3';

export type RopeScaling =
  | { type: 'linear'; factor: number }
  | {
      type: 'llama3';
      factor: number;
      lowFrequencyFactor: number;
      highFrequencyFactor: number;
      originalMaxPositionEmbeddings: number;
    };

export interface ModelConfig {
  family: ModelFamily;
  hiddenSize: number;
  intermediateSize: number;
  layerCount: number;
  attentionHeadCount: number;
  keyValueHeadCount: number;
  headDimension: number;
  rmsNormEpsilon: number;
  ropeTheta: number;
  ropeScaling: RopeScaling | null;
  maxPositionEmbeddings: number;
  vocabularySize: number;
  tieWordEmbeddings: boolean;
  /** q/k/v projections carry biases (Qwen2 always; Llama/Qwen3 when `attention_bias`). */
  qkvBias: boolean;
  /** The output projection carries a bias (`attention_bias` on Llama). */
  outputProjectionBias: boolean;
  mlpBias: boolean;
  /** Per-head RMSNorm on queries and keys before RoPE (Qwen3). */
  qkNorm: boolean;
  bosTokenId: number | null;
  eosTokenIds: number[];
  /** The checkpoint's dtype as declared (`torch_dtype`, or `dtype` in transformers >= 5). */
  dtype: string | null;
}

const positiveInteger = z.number().int().positive();
const tokenIdList = z.union([z.number().int().nonnegative(), z.array(z.number().int().nonnegative())]).nullish();

const ropeScalingSchema = z
  .looseObject({
    rope_type: z.string().optional(),
    type: z.string().optional(),
    factor: z.number().positive().optional(),
    low_freq_factor: z.number().positive().optional(),
    high_freq_factor: z.number().positive().optional(),
    original_max_position_embeddings: positiveInteger.optional(),
    rope_theta: z.number().positive().optional(),
  })
  .nullish();

const configSchema = z.looseObject({
  model_type: z.enum(['llama', 'qwen2', 'qwen3']),
  hidden_size: positiveInteger,
  intermediate_size: positiveInteger,
  num_hidden_layers: positiveInteger,
  num_attention_heads: positiveInteger,
  num_key_value_heads: positiveInteger.nullish(),
  head_dim: positiveInteger.nullish(),
  rms_norm_eps: z.number().positive(),
  rope_theta: z.number().positive().nullish(),
  rope_scaling: ropeScalingSchema,
  // transformers >= 5 moves rope_theta and rope_scaling here.
  rope_parameters: ropeScalingSchema,
  max_position_embeddings: positiveInteger,
  vocab_size: positiveInteger,
  tie_word_embeddings: z.boolean().nullish(),
  attention_bias: z.boolean().nullish(),
  mlp_bias: z.boolean().nullish(),
  hidden_act: z.literal('silu').nullish(),
  bos_token_id: tokenIdList,
  eos_token_id: tokenIdList,
  torch_dtype: z.string().nullish(),
  dtype: z.string().nullish(),
});

type RawConfig = z.infer<typeof configSchema>;

function describeIssues(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.join('.');
  return { field, message: error.issues.map((each) => `${each.path.join('.') || '(root)'}: ${each.message}`).join('; ') };
}

function toIdList(value: number | number[] | null | undefined): number[] {
  if (value === null || value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function parseRopeScaling(raw: RawConfig): RopeScaling | null {
  const scaling = raw.rope_scaling ?? raw.rope_parameters;
  if (scaling === null || scaling === undefined) return null;
  const type = scaling.rope_type ?? scaling.type ?? 'default';
  if (type === 'default') return null;
  const field = raw.rope_scaling ? 'rope_scaling' : 'rope_parameters';
  if (scaling.factor === undefined) {
    throw new ClawrlError('configuration_error', `config.json: ${field}.factor is required for rope type '${type}'`, {
      param: `${field}.factor`,
    });
  }
  if (type === 'linear') return { type: 'linear', factor: scaling.factor };
  if (type === 'llama3') {
    const original = scaling.original_max_position_embeddings;
    if (original === undefined) {
      throw new ClawrlError(
        'configuration_error',
        `config.json: ${field}.original_max_position_embeddings is required for llama3 rope scaling`,
        { param: `${field}.original_max_position_embeddings` },
      );
    }
    return {
      type: 'llama3',
      factor: scaling.factor,
      lowFrequencyFactor: scaling.low_freq_factor ?? 1,
      highFrequencyFactor: scaling.high_freq_factor ?? 4,
      originalMaxPositionEmbeddings: original,
    };
  }
  throw new ClawrlError('configuration_error', `config.json: unsupported ${field} type '${type}' (supported: linear, llama3)`, {
    param: field,
  });
}

/** Validates a parsed `config.json` object. Throws `configuration_error` naming the bad field. */
export function parseModelConfig(json: unknown): ModelConfig {
  const result = configSchema.safeParse(json);
  if (!result.success) {
    const { field, message } = describeIssues(result.error);
    throw new ClawrlError('configuration_error', `config.json: invalid field ${field} (${message})`, { param: field });
  }
  const raw = result.data;
  const family = raw.model_type;
  const attentionHeadCount = raw.num_attention_heads;
  const keyValueHeadCount = raw.num_key_value_heads ?? attentionHeadCount;
  if (attentionHeadCount % keyValueHeadCount !== 0) {
    throw new ClawrlError(
      'configuration_error',
      `config.json: num_attention_heads (${attentionHeadCount}) must be a multiple of num_key_value_heads (${keyValueHeadCount})`,
      { param: 'num_key_value_heads' },
    );
  }
  let headDimension = raw.head_dim;
  if (headDimension === null || headDimension === undefined) {
    if (raw.hidden_size % attentionHeadCount !== 0) {
      throw new ClawrlError(
        'configuration_error',
        `config.json: hidden_size (${raw.hidden_size}) is not divisible by num_attention_heads (${attentionHeadCount}) and head_dim is absent`,
        { param: 'head_dim' },
      );
    }
    headDimension = raw.hidden_size / attentionHeadCount;
  }
  const ropeTheta = raw.rope_theta ?? raw.rope_parameters?.rope_theta ?? 10_000;
  const attentionBias = raw.attention_bias ?? false;
  return {
    family,
    hiddenSize: raw.hidden_size,
    intermediateSize: raw.intermediate_size,
    layerCount: raw.num_hidden_layers,
    attentionHeadCount,
    keyValueHeadCount,
    headDimension,
    rmsNormEpsilon: raw.rms_norm_eps,
    ropeTheta,
    ropeScaling: parseRopeScaling(raw),
    maxPositionEmbeddings: raw.max_position_embeddings,
    vocabularySize: raw.vocab_size,
    // LlamaConfig, Qwen2Config and Qwen3Config all default tie_word_embeddings to false.
    tieWordEmbeddings: raw.tie_word_embeddings ?? false,
    // Qwen2's attention hard-codes bias=True on q/k/v; there is no config flag for it.
    qkvBias: family === 'qwen2' ? true : attentionBias,
    outputProjectionBias: family === 'qwen2' ? false : attentionBias,
    mlpBias: family === 'llama' ? (raw.mlp_bias ?? false) : false,
    qkNorm: family === 'qwen3',
    bosTokenId: toIdList(raw.bos_token_id)[0] ?? null,
    eosTokenIds: toIdList(raw.eos_token_id),
    dtype: raw.torch_dtype ?? raw.dtype ?? null,
  };
}

export interface GenerationConfig {
  eosTokenIds: number[];
  bosTokenId: number | null;
  padTokenId: number | null;
  doSample: boolean | null;
  temperature: number | null;
  topP: number | null;
  topK: number | null;
  repetitionPenalty: number | null;
}

const generationConfigSchema = z.looseObject({
  eos_token_id: tokenIdList,
  bos_token_id: tokenIdList,
  pad_token_id: tokenIdList,
  do_sample: z.boolean().nullish(),
  temperature: z.number().nonnegative().nullish(),
  top_p: z.number().nonnegative().nullish(),
  top_k: z.number().int().nonnegative().nullish(),
  repetition_penalty: z.number().positive().nullish(),
});

/** Validates a parsed `generation_config.json`; its eos list supplies extra stop ids. */
export function parseGenerationConfig(json: unknown): GenerationConfig {
  const result = generationConfigSchema.safeParse(json);
  if (!result.success) {
    const { field, message } = describeIssues(result.error);
    throw new ClawrlError('configuration_error', `generation_config.json: invalid field ${field} (${message})`, {
      param: field,
    });
  }
  const raw = result.data;
  return {
    eosTokenIds: toIdList(raw.eos_token_id),
    bosTokenId: toIdList(raw.bos_token_id)[0] ?? null,
    padTokenId: toIdList(raw.pad_token_id)[0] ?? null,
    doSample: raw.do_sample ?? null,
    temperature: raw.temperature ?? null,
    topP: raw.top_p ?? null,
    topK: raw.top_k ?? null,
    repetitionPenalty: raw.repetition_penalty ?? null,
  };
}
