/**
 * KV-cache sampling of n continuations of one prompt, batched: the prompt is prefilled once
 * (batch 1), its cache is tiled to n rows, and every decode step runs the still-active rows as one
 * batch; when rows finish, the cache is compacted to the active rows so finished samples cost
 * nothing. Token choice happens in JS (see sampling-distribution.ts for the exact log-prob that is
 * recorded). The same seed, prompt and options give the same tokens.
 */
import * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';
import { ensureFits } from '../tensor/index.js';
import { chooseToken } from './sampling-distribution.js';
import type { SamplingParameters, TokenChoice } from './sampling-distribution.js';
import { createSeededRandom } from '../core/seeded-random.js';
import type { PrefixCache } from './prefix-cache.js';
import { tidyResult } from './tidy-result.js';
import { headLogits } from './token-logprobs.js';
import { transformerHidden } from './transformer-forward.js';
import type { ForwardModel, LayerCache } from './transformer-forward.js';

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
  /** Reuses and keeps the KV of prompt prefixes (`prefix-cache.ts`). */
  prefixCache?: PrefixCache;
  /** Constrained decoding: the tokens a sample may draw next (1: allowed), or null for any. */
  allowedTokens?: (sequenceIndex: number) => Uint8Array | null;
  signal?: AbortSignal;
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

interface StepOutput {
  logits: tf.Tensor2D;
  cache: LayerCache[];
}

function disposeCache(cache: LayerCache[]): void {
  for (const layer of cache) tf.dispose([layer.key, layer.value]);
}

function runStep(model: ForwardModel, tokenIds: number[][], offset: number, cache: LayerCache[] | null): StepOutput {
  return tidyResult(() => {
    const batch = tokenIds.length;
    const length = tokenIds[0]?.length ?? 0;
    const input = tf.tensor2d(tokenIds.flat(), [batch, length], 'int32');
    const result = transformerHidden(model, input, { offset, cache, keepCache: true, recompute: false });
    // Only the last position of each row predicts the next token.
    const last = length === 1 ? result.hidden : tf.reshape(tf.slice(tf.reshape(result.hidden, [batch, length, -1]), [0, length - 1, 0], [-1, 1, -1]), [batch, -1]);
    return { logits: headLogits(last as tf.Tensor2D, model.parameters.lmHead, 1), cache: result.cache ?? [] };
  });
}

function cacheBytes(model: ForwardModel, rows: number, positions: number): number {
  const { layerCount, keyValueHeadCount, headDim } = model.shape;
  return 2 * layerCount * rows * positions * keyValueHeadCount * headDim * 4;
}

function prefillBytes(model: ForwardModel, length: number): number {
  const { hiddenSize, intermediateSize, headCount, headDim, vocabSize } = model.shape;
  return 4 * length * (8 * hiddenSize + 4 * intermediateSize + 6 * headCount * headDim + 2 * headCount * length) + 4 * vocabSize;
}

export async function sampleWithCache(model: ForwardModel, request: SampleRequest): Promise<SampleResult> {
  const options = sampleRequestSchema.parse(request);
  const prompt = options.promptTokenIds;
  const { vocabSize, maxPositionEmbeddings } = model.shape;
  if (prompt.some((tokenId) => tokenId >= vocabSize)) {
    throw new ClawrlError('invalid_request', `prompt has token ids outside the vocabulary (${vocabSize})`, { param: 'prompt' });
  }
  if (prompt.length + options.maxTokens > maxPositionEmbeddings) {
    throw new ClawrlError(
      'context_length_exceeded',
      `prompt of ${prompt.length} tokens plus ${options.maxTokens} new tokens exceeds the model's ${maxPositionEmbeddings} positions`,
    );
  }
  ensureFits(cacheBytes(model, options.n, prompt.length + options.maxTokens) + prefillBytes(model, prompt.length), {
    purpose: `sampling ${options.n}×${options.maxTokens} tokens after a ${prompt.length}-token prompt`,
  });
  const parameters: SamplingParameters = {
    temperature: options.temperature,
    topP: options.topP,
    topK: options.topK,
    topLogprobs: options.topLogprobs,
  };
  const random = createSeededRandom(options.seed ?? Math.floor(Math.random() * 2 ** 32));
  const stopTokens = new Set(options.stopTokenIds);
  const sequences: SampledSequence[] = Array.from({ length: options.n }, () => ({
    tokenIds: [],
    logprobs: [],
    top: [],
    finishReason: 'length',
  }));
  let active = sequences.map((_, index) => index);

  // The prompt's prefill, from the KV of a cached prefix when one is kept.
  const hit = request.prefixCache?.lookup(prompt) ?? null;
  let step: StepOutput;
  try {
    step = hit === null ? runStep(model, [prompt], 0, null) : runStep(model, [prompt.slice(hit.length)], hit.length, hit.cache);
  } finally {
    if (hit !== null) disposeCache(hit.cache);
  }
  request.prefixCache?.store(prompt, step.cache);
  // Every sample starts from the same prompt distribution: tile its single row n times.
  let rowOfActive = active.map(() => 0);
  for (let position = 0; position < options.maxTokens && active.length > 0; position += 1) {
    if (request.signal?.aborted === true) {
      for (const index of active) (sequences[index] as SampledSequence).finishReason = 'aborted';
      active = [];
      break;
    }
    const logits = (await step.logits.data()) as Float32Array;
    const nextActive: number[] = [];
    const nextTokens: number[][] = [];
    active.forEach((sequenceIndex, activePosition) => {
      const row = rowOfActive[activePosition] ?? 0;
      const allowed = request.allowedTokens?.(sequenceIndex) ?? undefined;
      const choice = chooseToken(logits.subarray(row * vocabSize, (row + 1) * vocabSize), parameters, random, allowed);
      const sequence = sequences[sequenceIndex] as SampledSequence;
      sequence.tokenIds.push(choice.tokenId);
      sequence.logprobs.push(choice.logprob);
      sequence.top.push(choice.top);
      const callbackSaysStop = request.onToken?.({ ...choice, sequenceIndex, step: position }) === 'stop';
      if (stopTokens.has(choice.tokenId) || callbackSaysStop) sequence.finishReason = 'stop';
      else nextActive.push(activePosition);
      nextTokens.push([choice.tokenId]);
    });
    if (nextActive.length === 0 || position + 1 === options.maxTokens) {
      active = nextActive.map((activePosition) => active[activePosition] ?? 0);
      break;
    }
    const previous = step;
    const rows = nextActive.map((activePosition) => rowOfActive[activePosition] ?? 0);
    const cacheRows = previous.cache[0]?.key.shape[0] ?? 0;
    const unchanged = rows.length === cacheRows && rows.every((row, index) => row === index);
    // Gathering copies the whole cache, so it only happens when rows finished (or to tile the prompt).
    const cache = unchanged
      ? null
      : tidyResult(() =>
          previous.cache.map((layer) => {
            const indices = tf.tensor1d(rows, 'int32');
            return { key: tf.gather(layer.key, indices), value: tf.gather(layer.value, indices) };
          }),
        );
    const inputs = nextActive.map((activePosition) => nextTokens[activePosition] ?? [0]);
    try {
      step = runStep(model, inputs, prompt.length + position, cache ?? previous.cache);
    } finally {
      if (cache !== null) disposeCache(cache);
      previous.logits.dispose();
      disposeCache(previous.cache);
    }
    active = nextActive.map((activePosition) => active[activePosition] ?? 0);
    rowOfActive = active.map((_, index) => index);
    // Let the event loop deliver aborts and messages between steps.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  step.logits.dispose();
  disposeCache(step.cache);
  return { sequences };
}
