/**
 * Log-probs of a given continuation after a prompt (the OPD teacher, `POST /v1/score`, the
 * importance ratios' check), in one forward over prompt and continuation; a prompt sharing a
 * prefix with one sampled before reuses its KV. The lm head runs in row chunks so a long
 * continuation's logits never exist at once.
 */
import * as tf from '@tensorflow/tfjs';
import { ClawrlError } from '../spec/clawrl-error.js';
import { ensureFits } from '../tensor/index.js';
import type { LoraAdapter } from './lora-adapter.js';
import type { PrefixCache } from './prefix-cache.js';
import { tidyResult } from './tidy-result.js';
import { defaultChunkRows, headLogits } from './token-logprobs.js';
import { transformerHidden } from './transformer-forward.js';
import type { ForwardModel } from './transformer-forward.js';

export interface ScoreRequest {
  promptTokenIds: number[];
  continuationTokenIds: number[];
  /** Default 1; pass the sampling temperature to reproduce sampled log-probs. */
  temperature?: number;
  /** Also return this many alternatives per position (same distribution). */
  topLogprobs?: number;
  /** Score with this LoRA adapter on the base weights (null: none); absent: the model's own. */
  adapter?: LoraAdapter | null;
}

export interface ScoreResult {
  /** log p(continuation[i] | prompt, continuation[<i]). */
  logprobs: number[];
  top: { tokenId: number; logprob: number }[][];
}

export async function scoreContinuation(model: ForwardModel, prefixCache: PrefixCache | null, request: ScoreRequest): Promise<ScoreResult> {
  const shape = model.shape;
  const { promptTokenIds: prompt, continuationTokenIds: continuation } = request;
  const temperature = request.temperature ?? 1;
  const topCount = request.topLogprobs ?? 0;
  if (prompt.length === 0 || continuation.length === 0) {
    throw new ClawrlError('invalid_request', 'scoring needs a non-empty prompt and continuation');
  }
  const tokenIds = [...prompt, ...continuation];
  if (tokenIds.length > shape.maxPositionEmbeddings) {
    throw new ClawrlError('context_length_exceeded', `${tokenIds.length} tokens exceed the model's ${shape.maxPositionEmbeddings} positions`);
  }
  if (tokenIds.some((tokenId) => tokenId < 0 || tokenId >= shape.vocabSize || !Number.isInteger(tokenId))) {
    throw new ClawrlError('invalid_request', 'token id outside the vocabulary');
  }
  if (!(temperature > 0)) throw new ClawrlError('invalid_request', 'scoring temperature must be > 0', { param: 'temperature' });
  ensureFits(4 * tokenIds.length * (10 * shape.hiddenSize + 3 * shape.intermediateSize + 3 * shape.headCount * tokenIds.length), {
    purpose: `scoring ${tokenIds.length} tokens`,
  });
  // A prompt sharing a prefix with one sampled before (the OPD teacher's: the turn's messages and a hint) reuses its KV.
  const hit = prefixCache?.lookup(prompt, model.lora) ?? null;
  const cachedLength = hit?.length ?? 0;
  let hidden: tf.Tensor2D;
  try {
    hidden = tf.tidy(() => {
      const input = tf.tensor2d(tokenIds.slice(cachedLength), [1, tokenIds.length - cachedLength], 'int32');
      const result = transformerHidden(model, input, { offset: cachedLength, cache: hit?.cache ?? null, keepCache: false, recompute: false });
      return tf.slice(result.hidden, [prompt.length - 1 - cachedLength, 0], [continuation.length, -1]);
    });
  } finally {
    for (const layer of hit?.cache ?? []) tf.dispose([layer.key, layer.value]);
  }
  const logprobs: number[] = [];
  const top: ScoreResult['top'] = [];
  const chunkRows = defaultChunkRows(shape.vocabSize);
  try {
    for (let start = 0; start < continuation.length; start += chunkRows) {
      const size = Math.min(chunkRows, continuation.length - start);
      const targets = continuation.slice(start, start + size);
      const chunk = tidyResult(() => {
        const logits = headLogits(tf.slice(hidden, [start, 0], [size, -1]), model.parameters.lmHead, temperature);
        const normalised = tf.sub(logits, tf.logSumExp(logits, 1, true));
        const flatIndex = tf.tensor1d(targets.map((tokenId, row) => row * shape.vocabSize + tokenId), 'int32');
        const picked = tf.gather(tf.reshape(normalised, [-1]), flatIndex);
        const best = topCount > 0 ? tf.topk(normalised, Math.min(topCount, shape.vocabSize)) : null;
        return { picked, values: best?.values ?? null, indices: best?.indices ?? null };
      });
      logprobs.push(...(await chunk.picked.data()));
      if (chunk.values !== null && chunk.indices !== null) {
        const values = await chunk.values.data();
        const indices = await chunk.indices.data();
        const width = chunk.values.shape[1] ?? 0;
        for (let row = 0; row < size; row += 1) {
          top.push(Array.from({ length: width }, (_, column) => ({
            tokenId: indices[row * width + column] ?? 0,
            logprob: values[row * width + column] ?? 0,
          })));
        }
      } else for (let row = 0; row < size; row += 1) top.push([]);
      tf.dispose([chunk.picked, chunk.values, chunk.indices].filter((tensor): tensor is tf.Tensor => tensor !== null));
    }
  } finally {
    hidden.dispose();
  }
  return { logprobs, top };
}
