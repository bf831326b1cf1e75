/**
 * The architecture facts the compute code needs, converted from the project's `ModelConfig`
 * (model-config.ts parses `config.json`). Family differences are reduced to flags, so the forward
 * pass has no `if (family === ...)` branches: Qwen2 is "q/k/v bias", Qwen3 is "per-head q/k
 * RMSNorm and an explicit head_dim".
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import { parseModelConfig } from './model-config.js';
import type { ModelConfig, RopeScaling } from './model-config.js';

export type TransformerFamily = ModelConfig['family'];


export interface TransformerShape {
  family: TransformerFamily;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  layerCount: number;
  headCount: number;
  keyValueHeadCount: number;
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  /** Linear (positions divided by factor) or Llama 3 frequency-dependent scaling. */
  ropeScaling: RopeScaling | null;
  maxPositionEmbeddings: number;
  tieWordEmbeddings: boolean;
  /** Bias on q_proj, k_proj and v_proj (Qwen2 always; Llama/Qwen3 with attention_bias). */
  qkvBias: boolean;
  /** Bias on o_proj (Llama/Qwen3 with attention_bias; never Qwen2). */
  outputBias: boolean;
  /** Bias on gate/up/down (Llama mlp_bias). */
  mlpBias: boolean;
  /** Per-head RMSNorm on q and k before RoPE (Qwen3). */
  qkNorm: boolean;
}

/** Converts the project's parsed `config.json` (model-config.ts) into the compute shape. */
export function transformerShapeFromModelConfig(config: ModelConfig): TransformerShape {
  const shape: TransformerShape = {
    family: config.family,
    vocabSize: config.vocabularySize,
    hiddenSize: config.hiddenSize,
    intermediateSize: config.intermediateSize,
    layerCount: config.layerCount,
    headCount: config.attentionHeadCount,
    keyValueHeadCount: config.keyValueHeadCount,
    headDim: config.headDimension,
    rmsNormEps: config.rmsNormEpsilon,
    ropeTheta: config.ropeTheta,
    ropeScaling: config.ropeScaling,
    maxPositionEmbeddings: config.maxPositionEmbeddings,
    tieWordEmbeddings: config.tieWordEmbeddings,
    qkvBias: config.qkvBias,
    outputBias: config.outputProjectionBias,
    mlpBias: config.mlpBias,
    qkNorm: config.qkNorm,
  };
  validateTransformerShape(shape);
  return shape;
}

/** Parses a Hugging Face `config.json` (already JSON-parsed) of a Llama, Qwen2 or Qwen3 model. */
export function transformerShapeFromHuggingFaceConfig(json: unknown): TransformerShape {
  return transformerShapeFromModelConfig(parseModelConfig(json));
}

function configurationError(message: string): ClawrlError {
  return new ClawrlError('configuration_error', `model shape: ${message}`);
}

/** Checks the invariants the forward pass relies on. */
export function validateTransformerShape(shape: TransformerShape): void {
  if (!Number.isInteger(shape.headDim) || shape.headDim % 2 !== 0) {
    throw configurationError(`head_dim ${shape.headDim} must be an even integer (RoPE rotates halves)`);
  }
  if (shape.headCount % shape.keyValueHeadCount !== 0) {
    throw configurationError(`num_attention_heads ${shape.headCount} is not a multiple of num_key_value_heads ${shape.keyValueHeadCount}`);
  }
}

/** Total parameter count, counting a tied embedding once. */
export function parameterCount(shape: TransformerShape): number {
  const { hiddenSize: d, intermediateSize: f, headDim, headCount, keyValueHeadCount } = shape;
  const attention = d * headDim * (2 * headCount + 2 * keyValueHeadCount);
  const biases = (shape.qkvBias ? headDim * (headCount + 2 * keyValueHeadCount) : 0) + (shape.outputBias ? d : 0);
  const mlp = 3 * d * f + (shape.mlpBias ? 2 * f + d : 0);
  const norms = 2 * d + (shape.qkNorm ? 2 * headDim : 0);
  const perLayer = attention + biases + mlp + norms;
  const embeddings = shape.vocabSize * d * (shape.tieWordEmbeddings ? 1 : 2);
  return shape.layerCount * perLayer + embeddings + d;
}
