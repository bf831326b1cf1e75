/**
 * What a sampling request is, and the checks it passes before it joins the running batch
 * (`continuous-batcher.ts` runs it). Token choice happens in JS (see sampling-distribution.ts for
 * the exact log-prob that is recorded). The same seed, prompt and options give the same tokens,
 * whatever else runs in the batch.
 */
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';
import { ensureFits } from '../tensor/index.js';
import type { LoraAdapter } from './lora-adapter.js';
import type { TokenChoice } from './sampling-distribution.js';
import type { TransformerShape } from './transformer-shape.js';

export const sampleRequestSchema = z.object({
  promptTokenIds: z.array(z.number().int().nonnegative()).min(1),
  n: z.number().int().positive().default(1),
  maxTokens: z.number().int().positive(),
  temperature: z.number().min(0).default(1),
  topP: z.number().gt(0).max(1).default(1),
  topK: z.number().int().min(0).default(0),
  topLogprobs: z.number().int().min(0).max(100).default(0),
  seed: z.number().int().optional(),
  stopTokenIds: z.array(z.number().int().nonnegative()).default([]),
});

export interface SampledTokenEvent extends TokenChoice {
  /** Which of the n samples (0-based). */
  sequenceIndex: number;
  /** Position of this token within its sample's continuation. */
  step: number;
}

export type SampleFinishReason = 'stop' | 'length' | 'aborted';

export interface SampleRequest extends z.input<typeof sampleRequestSchema> {
  /**
   * Called for each sampled token, step by step (tokens of one step in sequence order). Return
   * 'stop' to end that sample after this token, e.g. when a stop sequence has appeared.
   */
  onToken?: (event: SampledTokenEvent) => 'stop' | void;
  /** Constrained decoding: the tokens a sample may draw next (1: allowed), or null for any. */
  allowedTokens?: (sequenceIndex: number) => Uint8Array | null;
  signal?: AbortSignal;
  /**
   * The LoRA adapter to sample with, on the model's base weights (null: none, the base model);
   * absent: the model's own adapter. Requests of different adapters decode in one batch.
   */
  adapter?: LoraAdapter | null;
}

export interface SampledSequence {
  tokenIds: number[];
  /** One per token; see sampling-distribution.ts for the distribution. */
  logprobs: number[];
  /** Alternatives per token; empty arrays when `topLogprobs` is 0. */
  top: { tokenId: number; logprob: number }[][];
  /** 'stop': a stop token was sampled (it is included) or onToken returned 'stop'. */
  finishReason: SampleFinishReason;
}

export interface SampleResult {
  sequences: SampledSequence[];
}

export type SampleOptions = z.output<typeof sampleRequestSchema>;

/** KV bytes of `rows` sequences of `positions` tokens. */
export function cacheBytes(shape: TransformerShape, rows: number, positions: number): number {
  const { layerCount, keyValueHeadCount, headDim } = shape;
  return 2 * layerCount * rows * positions * keyValueHeadCount * headDim * 4;
}

function prefillBytes(shape: TransformerShape, length: number, keys: number): number {
  const { hiddenSize, intermediateSize, headCount, headDim, vocabSize } = shape;
  return 4 * length * (8 * hiddenSize + 4 * intermediateSize + 6 * headCount * headDim + 2 * headCount * keys) + 4 * vocabSize;
}

/** Parses a request and refuses one the model cannot run (vocabulary, window, memory for a prefill chunk). */
export function validateSampleRequest(shape: TransformerShape, request: SampleRequest, prefillChunkTokens: number): SampleOptions {
  const options = sampleRequestSchema.parse(request);
  const prompt = options.promptTokenIds;
  const { vocabSize, maxPositionEmbeddings } = shape;
  if (prompt.some((tokenId) => tokenId >= vocabSize)) {
    throw new ClawrlError('invalid_request', `prompt has token ids outside the vocabulary (${vocabSize})`, { param: 'prompt' });
  }
  if (prompt.length + options.maxTokens > maxPositionEmbeddings) {
    throw new ClawrlError(
      'context_length_exceeded',
      `prompt of ${prompt.length} tokens plus ${options.maxTokens} new tokens exceeds the model's ${maxPositionEmbeddings} positions`,
    );
  }
  ensureFits(cacheBytes(shape, options.n, prompt.length + options.maxTokens) + prefillBytes(shape, Math.min(prompt.length, prefillChunkTokens), prompt.length), {
    purpose: `sampling ${options.n}×${options.maxTokens} tokens after a ${prompt.length}-token prompt`,
  });
  return options;
}
