/**
 * The decoder forward pass over a ragged batch: rows of different lengths, each at its own
 * positions after its own KV cache, as continuous batching needs (a decode row of one token beside
 * another at a different position, beside a chunk of a new prompt's prefill). The tokens of all rows
 * are stacked as one [N, d] activation, so every linear (the bulk of the work) is one matmul over the
 * whole batch; RoPE takes each token's own position; only attention runs row by row, over that
 * row's cache and its own causal mask. No padding, so no wasted compute and nothing for a padding
 * mask to get wrong: a row's attention is the same computation as when it runs alone.
 *
 * Rows may carry different LoRA adapters (requests of several policy versions in one step): the
 * base matmuls still run over the whole batch, and each row gets its own adapter's delta
 * (`segmented-lora.ts`); rows of one adapter should be adjacent, so each adapter is one segment.
 */
import * as tf from '@tensorflow/tfjs';
import { rmsNorm } from '../tensor/index.js';
import { attendCached, causalMask, embed, feedForward, linear, projectQueryKeyValue, rotaryTables, rotate } from './transformer-forward.js';
import type { ForwardModel, LayerCache, LoraPlan, StepGeometry } from './transformer-forward.js';
import type { LoraSegment, LoraStacks } from './segmented-lora.js';
import type { LoraAdapter } from './lora-adapter.js';

export interface RaggedRow {
  /** The row's new tokens (one when decoding, a chunk when prefilling). */
  tokenIds: readonly number[];
  /** K/V of the row's earlier positions ([1, Hkv, S, hd] per layer), or null for a fresh sequence. */
  cache: readonly LayerCache[] | null;
  /** The row's adapter (null: none, the base model); absent: the model's own (`ForwardModel.lora`). */
  adapter?: LoraAdapter | null;
}

export interface RaggedResult {
  /** [N, d] after the final norm: the rows' tokens in order. */
  hidden: tf.Tensor2D;
  /** Each row's K/V after this step (past included), one entry per layer. */
  caches: LayerCache[][];
}

/** Length of a row's cache: the position of its first new token. */
function cachedLength(cache: readonly LayerCache[] | null): number {
  return cache?.[0]?.key.shape[2] ?? 0;
}

/** One adapter for the whole batch when the rows agree, else one segment per run of rows of one adapter. */
function loraPlanOf(model: ForwardModel, rows: readonly RaggedRow[], lengths: readonly number[], stacks: LoraStacks): LoraPlan {
  const adapters = rows.map((row) => (row.adapter === undefined ? model.lora : row.adapter));
  const first = adapters[0] ?? null;
  if (adapters.every((adapter) => adapter === first)) return first;
  const segments: LoraSegment[] = [];
  let start = 0;
  adapters.forEach((adapter, index) => {
    const length = lengths[index] ?? 0;
    const last = segments.at(-1);
    if (last !== undefined && last.adapter === adapter) last.length += length;
    else segments.push({ start, length, adapter });
    start += length;
  });
  return { segments, stacks, masks: new Map() };
}

/** Runs the decoder on a ragged batch; the caller owns tidying, and `stacks` (kept across steps). */
export function raggedHidden(model: ForwardModel, rows: readonly RaggedRow[], stacks: LoraStacks): RaggedResult {
  const { headCount: heads, keyValueHeadCount: kvHeads, headDim, rmsNormEps: epsilon } = model.shape;
  const offsets = rows.map((row) => cachedLength(row.cache));
  const lengths = rows.map((row) => row.tokenIds.length);
  const starts = lengths.map((_, index) => lengths.slice(0, index).reduce((sum, length) => sum + length, 0));
  const total = lengths.reduce((sum, length) => sum + length, 0);
  const positions = rows.flatMap((row, index) => row.tokenIds.map((_, t) => (offsets[index] ?? 0) + t));
  const { cos, sin } = rotaryTables(model, positions);
  // All tokens as one row of length N for RoPE: each token carries its own angle.
  const geometry: StepGeometry = { batch: 1, length: total, offset: 0, cos, sin, mask: null };
  const masks = rows.map((row, index) => causalMask(row.tokenIds.length, offsets[index] ?? 0));
  const lora = loraPlanOf(model, rows, lengths, stacks);
  let x = embed(model, tf.tensor2d(rows.flatMap((row) => [...row.tokenIds]), [1, total], 'int32'));
  const caches: LayerCache[][] = rows.map(() => []);
  for (let layerIndex = 0; layerIndex < model.shape.layerCount; layerIndex += 1) {
    const layer = model.parameters.layers[layerIndex];
    if (layer === undefined) throw new RangeError(`layer ${layerIndex} out of range`);
    const { q, k, v } = projectQueryKeyValue(model, layerIndex, layer, rmsNorm(x, layer.inputNorm, { epsilon }) as tf.Tensor2D, lora);
    const qRotated = tf.mul(rotate(q, geometry, heads, headDim), 1 / Math.sqrt(headDim));
    const kRotated = rotate(k, geometry, kvHeads, headDim);
    const vShaped = tf.reshape(v, [1, total, kvHeads, headDim]);
    const merged = rows.map((row, index) => {
      const start = starts[index] ?? 0;
      const length = lengths[index] ?? 0;
      const past = row.cache?.[layerIndex] ?? null;
      let key = tf.transpose(tf.slice(kRotated, [0, start, 0, 0], [1, length, -1, -1]), [0, 2, 1, 3]) as tf.Tensor4D;
      let value = tf.transpose(tf.slice(vShaped, [0, start, 0, 0], [1, length, -1, -1]), [0, 2, 1, 3]) as tf.Tensor4D;
      if (past !== null) {
        key = tf.concat([past.key, key], 2);
        value = tf.concat([past.value, value], 2);
      }
      caches[index]?.push({ key, value });
      const rowQueries = tf.slice(qRotated, [0, start, 0, 0], [1, length, -1, -1]);
      return attendCached(model.shape, rowQueries, key, value, masks[index] ?? null);
    });
    const attended = linear(merged.length === 1 ? (merged[0] as tf.Tensor2D) : tf.concat(merged, 0), layer.o, lora, `model.layers.${layerIndex}.self_attn.o_proj`);
    x = feedForward(model, layerIndex, layer, tf.add(x, attended) as tf.Tensor2D, lora);
  }
  const hidden = rmsNorm(x, model.parameters.finalNorm, { epsilon }) as tf.Tensor2D;
  return { hidden, caches };
}
