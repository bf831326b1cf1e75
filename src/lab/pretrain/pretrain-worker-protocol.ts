/**
 * Messages between the pretraining coordinator and its gradient workers. Each worker owns one
 * wasm instance and a full copy of the model and optimizer; every step it computes the gradient of
 * its share of the batch, the coordinator sums the shares, and every worker applies the same AdamW
 * step to the same sum, so the copies stay identical without ever shipping weights.
 */
import type { FloatTensorData } from '../../model/safetensors.js';
import type { TrainingSequenceData } from './training-sequence.js';

export type TensorMap = Map<string, FloatTensorData>;

export interface PretrainWorkerData {
  /** The HF `config.json` object. */
  configJson: Record<string, unknown>;
  weights: TensorMap;
  optimizerState: { stepCount: number; first: TensorMap; second: TensorMap } | null;
  weightDecay: number;
  maxGradientNorm: number;
}

export type PretrainWorkerRequest =
  | { kind: 'gradients'; sequences: TrainingSequenceData[]; lossScale: number }
  | { kind: 'apply'; gradients: TensorMap; learningRate: number }
  | { kind: 'export' }
  | { kind: 'close' };

export type PretrainWorkerResponse =
  | { kind: 'ready' }
  | { kind: 'gradients'; gradients: TensorMap; negativeLogLikelihood: number; targetTokens: number }
  | { kind: 'applied'; gradientNorm: number }
  | { kind: 'exported'; weights: TensorMap; optimizerState: { stepCount: number; first: TensorMap; second: TensorMap } }
  | { kind: 'error'; message: string };

/** The backing buffers of a tensor map, to transfer instead of copy. */
export function transferablesOf(...maps: TensorMap[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const map of maps) for (const tensor of map.values()) buffers.add(tensor.data.buffer as ArrayBuffer);
  return [...buffers];
}
