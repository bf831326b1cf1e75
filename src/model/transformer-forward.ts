/**
 * The decoder forward pass shared by scoring, training and sampling, in Hugging Face semantics:
 * RMSNorm (weight applied after normalising), rotate_half RoPE, grouped-query attention,
 * SwiGLU MLP, optional LoRA on any linear module.
 *
 * Batching: rows of one call have equal length and share positions (`offset .. offset+T-1`).
 * Scoring and training run one sequence per call (no padding, no wasted compute). Sampling runs
 * ragged batches of rows with their own lengths and positions (`ragged-forward.ts`, built from the
 * pieces exported here).
 *
 * Activations are [B·T, features] 2-D tensors so every linear is one plain 2-D matmul. GQA is
 * computed without repeating K/V: queries are regrouped as [B·Hkv, G·T, hd] (G query heads per
 * KV head, the HF repeat_kv order: KV head j serves query heads j·G .. j·G+G-1).
 */
import * as tf from '@tensorflow/tfjs';
import { rmsNorm, swiglu } from '../tensor/index.js';
import type { LoraAdapter } from './lora-adapter.js';
import { segmentedLoraDelta, type LoraBatch } from './segmented-lora.js';
import type { LayerParameters, LinearParameters, TransformerParameters } from './transformer-parameters.js';
import type { TransformerShape } from './transformer-shape.js';

export interface LayerCache {
  /** [B, Hkv, S, hd], RoPE already applied. */
  key: tf.Tensor4D;
  /** [B, Hkv, S, hd]. */
  value: tf.Tensor4D;
}

export interface ForwardModel {
  shape: TransformerShape;
  parameters: TransformerParameters;
  lora: LoraAdapter | null;
  inverseFrequencies: Float64Array;
}

export interface StepGeometry {
  batch: number;
  length: number;
  offset: number;
  cos: tf.Tensor;
  sin: tf.Tensor;
  /** Additive causal mask [T, S], or null for single-token steps (nothing to hide). */
  mask: tf.Tensor | null;
}

/** RoPE inverse frequencies, with Llama 3 frequency-dependent scaling when configured. */
export function ropeInverseFrequencies(shape: TransformerShape): Float64Array {
  const half = shape.headDim / 2;
  const frequencies = new Float64Array(half);
  for (let index = 0; index < half; index += 1) frequencies[index] = 1 / shape.ropeTheta ** ((2 * index) / shape.headDim);
  const scaling = shape.ropeScaling;
  if (scaling === null) return frequencies;
  if (scaling.type === 'linear') return frequencies.map((frequency) => frequency / scaling.factor);
  const { factor, lowFrequencyFactor: low, highFrequencyFactor: high, originalMaxPositionEmbeddings: context } = scaling;
  const lowFrequencyWavelength = context / low;
  const highFrequencyWavelength = context / high;
  for (let index = 0; index < half; index += 1) {
    const frequency = frequencies[index] ?? 0;
    const wavelength = (2 * Math.PI) / frequency;
    if (wavelength > lowFrequencyWavelength) frequencies[index] = frequency / factor;
    else if (wavelength >= highFrequencyWavelength) {
      const smooth = (context / wavelength - low) / (high - low);
      frequencies[index] = (1 - smooth) * (frequency / factor) + smooth * frequency;
    }
  }
  return frequencies;
}

/** RoPE cos/sin tables [N, 1, half] for the given positions (one per token). */
export function rotaryTables(model: ForwardModel, positions: readonly number[]): { cos: tf.Tensor; sin: tf.Tensor } {
  const frequencies = model.inverseFrequencies;
  const half = frequencies.length;
  const cos = new Float32Array(positions.length * half);
  const sin = new Float32Array(positions.length * half);
  positions.forEach((position, t) => {
    for (let index = 0; index < half; index += 1) {
      // Angles in float64 first: position·frequency loses digits in float32 at long positions.
      const angle = position * (frequencies[index] ?? 0);
      cos[t * half + index] = Math.cos(angle);
      sin[t * half + index] = Math.sin(angle);
    }
  });
  return { cos: tf.tensor3d(cos, [positions.length, 1, half]), sin: tf.tensor3d(sin, [positions.length, 1, half]) };
}

/** Additive causal mask [T, offset+T] for T new tokens after `offset` cached ones, or null for a single token (nothing to hide). */
export function causalMask(length: number, offset: number): tf.Tensor | null {
  if (length <= 1) return null;
  const keys = offset + length;
  const values = new Float32Array(length * keys);
  for (let t = 0; t < length; t += 1) values.fill(-1e9, t * keys + offset + t + 1, (t + 1) * keys);
  return tf.tensor2d(values, [length, keys]);
}

function stepGeometry(model: ForwardModel, batch: number, length: number, offset: number): StepGeometry {
  const { cos, sin } = rotaryTables(model, Array.from({ length }, (_, t) => offset + t));
  return { batch, length, offset, cos, sin, mask: causalMask(length, offset) };
}

/**
 * The LoRA of one forward: one adapter (or none) for every row, or each run of rows its own, as a
 * ragged batch holding requests of several policy versions has (`ragged-forward.ts`).
 */
export type LoraPlan = LoraAdapter | null | LoraBatch;

function isBatch(lora: LoraPlan): lora is LoraBatch {
  return lora !== null && 'segments' in lora;
}

/** x·A·B·scale of one adapter's module, or null when the adapter does not adapt it. */
function loraDelta(x: tf.Tensor2D, adapter: LoraAdapter | null, path: string): tf.Tensor2D | null {
  const module = adapter?.modules.get(path);
  if (adapter === null || module === undefined) return null;
  return tf.mul(tf.matMul(tf.matMul(x, module.a as tf.Tensor2D), module.b as tf.Tensor2D), adapter.scale) as tf.Tensor2D;
}

/**
 * x·W (+ bias) + each row's own LoRA delta: one adapter's for all rows, or with a `LoraBatch` each
 * row its own adapter's (`segmented-lora.ts`), a row of the base model none.
 */
export function linear(x: tf.Tensor2D, parameters: LinearParameters, lora: LoraPlan, path: string): tf.Tensor2D {
  let out: tf.Tensor2D = tf.matMul(x, parameters.weight);
  if (parameters.bias !== null) out = tf.add(out, parameters.bias);
  const delta = isBatch(lora) ? segmentedLoraDelta(x, lora, path) : loraDelta(x, lora, path);
  return delta === null ? out : tf.add(out, delta);
}

/** x [B·T, heads·hd] → [B, T, heads, hd] with RoPE (HF rotate_half: halves, not interleaved pairs). */
export function rotate(x: tf.Tensor, geometry: StepGeometry, heads: number, headDim: number): tf.Tensor4D {
  const shaped = tf.reshape(x, [geometry.batch, geometry.length, heads, headDim]);
  const half = headDim / 2;
  const first = tf.slice(shaped, [0, 0, 0, 0], [-1, -1, -1, half]);
  const second = tf.slice(shaped, [0, 0, 0, half], [-1, -1, -1, half]);
  return tf.concat(
    [tf.sub(tf.mul(first, geometry.cos), tf.mul(second, geometry.sin)), tf.add(tf.mul(second, geometry.cos), tf.mul(first, geometry.sin))],
    3,
  ) as tf.Tensor4D;
}

/**
 * Attention of rotated, pre-scaled queries [B, T, H, hd] over keys and values [B, Hkv, S, hd]
 * (past included), with an additive mask [T, S] or null; returns [B·T, H·hd].
 */
export function attendCached(shape: TransformerShape, qRotated: tf.Tensor, key: tf.Tensor4D, value: tf.Tensor4D, mask: tf.Tensor | null): tf.Tensor2D {
  const { headCount: heads, keyValueHeadCount: kvHeads, headDim } = shape;
  const group = heads / kvHeads;
  const [batch = 1, length = 1] = qRotated.shape;
  const keyLength = key.shape[2];
  const grouped = tf.reshape(
    tf.transpose(tf.reshape(qRotated, [batch, length, kvHeads, group, headDim]), [0, 2, 3, 1, 4]),
    [batch * kvHeads, group * length, headDim],
  );
  let scores: tf.Tensor = tf.matMul(grouped, tf.reshape(key, [batch * kvHeads, keyLength, headDim]), false, true);
  if (mask !== null) {
    scores = tf.reshape(tf.add(tf.reshape(scores, [batch * kvHeads, group, length, keyLength]), mask), [
      batch * kvHeads,
      group * length,
      keyLength,
    ]);
  }
  const mixed = tf.matMul(tf.softmax(scores) as tf.Tensor3D, tf.reshape(value, [batch * kvHeads, keyLength, headDim]));
  return tf.reshape(
    tf.transpose(tf.reshape(mixed, [batch, kvHeads, group, length, headDim]), [0, 3, 1, 2, 4]),
    [batch * length, heads * headDim],
  ) as tf.Tensor2D;
}

interface LayerOutput {
  output: tf.Tensor2D;
  cache: LayerCache;
}

/** q, k, v projections of normed x [N, d] ([N, heads·hd] each), Qwen3's per-head q/k norm applied. */
export function projectQueryKeyValue(
  model: ForwardModel,
  layerIndex: number,
  layer: LayerParameters,
  normed: tf.Tensor2D,
  lora: LoraPlan = model.lora,
): { q: tf.Tensor; k: tf.Tensor; v: tf.Tensor } {
  const { headDim, rmsNormEps } = model.shape;
  const prefix = `model.layers.${layerIndex}.self_attn`;
  let q: tf.Tensor = linear(normed, layer.q, lora, `${prefix}.q_proj`);
  let k: tf.Tensor = linear(normed, layer.k, lora, `${prefix}.k_proj`);
  const v = linear(normed, layer.v, lora, `${prefix}.v_proj`);
  if (layer.qNorm !== null && layer.kNorm !== null) {
    // Qwen3 normalises each head's q and k before RoPE.
    q = rmsNorm(tf.reshape(q, [-1, headDim]), layer.qNorm, { epsilon: rmsNormEps });
    k = rmsNorm(tf.reshape(k, [-1, headDim]), layer.kNorm, { epsilon: rmsNormEps });
  }
  return { q, k, v };
}

function attention(
  model: ForwardModel,
  layerIndex: number,
  layer: LayerParameters,
  normed: tf.Tensor2D,
  geometry: StepGeometry,
  past: LayerCache | null,
): LayerOutput {
  const { headCount: heads, keyValueHeadCount: kvHeads, headDim } = model.shape;
  const { batch, length } = geometry;
  const { q, k, v } = projectQueryKeyValue(model, layerIndex, layer, normed);
  // The softmax scale is folded into q: cheaper than scaling the [G·T, S] scores.
  const qRotated = tf.mul(rotate(q, geometry, heads, headDim), 1 / Math.sqrt(headDim));
  let key = tf.transpose(rotate(k, geometry, kvHeads, headDim), [0, 2, 1, 3]) as tf.Tensor4D;
  let value = tf.transpose(tf.reshape(v, [batch, length, kvHeads, headDim]), [0, 2, 1, 3]) as tf.Tensor4D;
  if (past !== null) {
    key = tf.concat([past.key, key], 2);
    value = tf.concat([past.value, value], 2);
  }
  const merged = attendCached(model.shape, qRotated, key, value, geometry.mask);
  return { output: linear(merged, layer.o, model.lora, `model.layers.${layerIndex}.self_attn.o_proj`), cache: { key, value } };
}

/** The post-attention half of a layer: residual + MLP(norm(residual)). */
export function feedForward(model: ForwardModel, layerIndex: number, layer: LayerParameters, residual: tf.Tensor2D, lora: LoraPlan = model.lora): tf.Tensor2D {
  const epsilon = model.shape.rmsNormEps;
  const normed = rmsNorm(residual, layer.postAttentionNorm, { epsilon }) as tf.Tensor2D;
  const prefix = `model.layers.${layerIndex}.mlp`;
  const gate = linear(normed, layer.gate, lora, `${prefix}.gate_proj`);
  const up = linear(normed, layer.up, lora, `${prefix}.up_proj`);
  const activated = swiglu(gate, up) as tf.Tensor2D;
  return tf.add(residual, linear(activated, layer.down, lora, `${prefix}.down_proj`)) as tf.Tensor2D;
}

/** One decoder layer on x [B·T, d]; returns the new residual stream and this step's K/V (past included). */
export function decoderLayer(
  model: ForwardModel,
  layerIndex: number,
  x: tf.Tensor2D,
  geometry: StepGeometry,
  past: LayerCache | null,
): LayerOutput {
  const layer = model.parameters.layers[layerIndex];
  if (layer === undefined) throw new RangeError(`layer ${layerIndex} out of range`);
  const epsilon = model.shape.rmsNormEps;
  const attended = attention(model, layerIndex, layer, rmsNorm(x, layer.inputNorm, { epsilon }) as tf.Tensor2D, geometry, past);
  const residual = tf.add(x, attended.output) as tf.Tensor2D;
  const output = feedForward(model, layerIndex, layer, residual);
  return { output, cache: attended.cache };
}

/** Trainable tensors a layer reads: they must be explicit inputs of a recomputing custom gradient. */
function layerTrainables(model: ForwardModel, layerIndex: number): tf.Tensor[] {
  if (model.parameters.trainable) {
    const prefix = `model.layers.${layerIndex}.`;
    return [...model.parameters.byName].filter(([name]) => name.startsWith(prefix)).map(([, tensor]) => tensor);
  }
  if (model.lora === null) return [];
  const prefix = `model.layers.${layerIndex}.`;
  return [...model.lora.modules].filter(([path]) => path.startsWith(prefix)).flatMap(([, module]) => [module.a, module.b]);
}

/**
 * The layer with activation recomputation: only its input is kept for backward, and the layer's
 * intermediates are rebuilt while back-propagating. Peak activation memory drops from all layers'
 * intermediates to one layer's, for about one extra forward pass.
 */
function recomputedDecoderLayer(model: ForwardModel, layerIndex: number, x: tf.Tensor2D, geometry: StepGeometry): tf.Tensor2D {
  const trainables = layerTrainables(model, layerIndex);
  // The forward scope disposes the geometry tensors before backward runs, so backward rebuilds them.
  const run = (input: tf.Tensor2D, fresh: boolean): tf.Tensor2D => {
    const used = fresh ? stepGeometry(model, geometry.batch, geometry.length, geometry.offset) : geometry;
    return decoderLayer(model, layerIndex, input, used, null).output;
  };
  const custom = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const save = args[args.length - 1] as tf.GradSaveFunc;
    const input = args[0] as tf.Tensor2D;
    save([input]);
    return {
      value: run(input, false),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const savedInput = saved[0] as tf.Tensor2D;
        // A nested tf.grads during backprop replaces the engine's active tape and leaves it null,
        // and the outer backprop then crashes disposing its saved tensors; keep the outer tape.
        const engineState = tf.engine().state;
        const outerTape = engineState.activeTape;
        try {
          return tf.grads((inputAgain: tf.Tensor) => run(inputAgain as tf.Tensor2D, true))([savedInput, ...trainables], dy as tf.Tensor);
        } finally {
          engineState.activeTape = outerTape;
        }
      },
    };
  });
  return custom(x, ...trainables) as tf.Tensor2D;
}

export interface HiddenOptions {
  /** Position of the first token (the length of `cache` when it is given). */
  offset: number;
  /** K/V of earlier positions, one entry per layer; null for a fresh sequence. */
  cache: LayerCache[] | null;
  /** Return this step's K/V (past included) for the next step. */
  keepCache: boolean;
  /** Recompute layer activations during backward instead of keeping them (training only). */
  recompute: boolean;
}

export interface HiddenResult {
  /** [B·T, d], after the final norm. */
  hidden: tf.Tensor2D;
  cache: LayerCache[] | null;
}

export function embed(model: ForwardModel, tokenIds: tf.Tensor2D): tf.Tensor2D {
  const flat = tf.reshape(tokenIds, [-1]) as tf.Tensor1D;
  const embedding = model.parameters.embedTokens;
  // tfjs-wasm has no UnsortedSegmentSum (gather's gradient); a trained embedding uses a one-hot
  // matmul instead, unless the tensor layer has registered the kernel.
  if (model.parameters.trainable && tf.getKernel('UnsortedSegmentSum', tf.getBackend()) === undefined) {
    return tf.matMul(tf.oneHot(flat, model.shape.vocabSize, 1, 0, 'float32') as tf.Tensor2D, embedding);
  }
  return tf.gather(embedding, flat);
}

/** Runs the decoder on token ids [B, T]; the caller owns tidying. */
export function transformerHidden(model: ForwardModel, tokenIds: tf.Tensor2D, options: HiddenOptions): HiddenResult {
  const [batch = 1, length = 1] = tokenIds.shape;
  const geometry = stepGeometry(model, batch, length, options.offset);
  let x = embed(model, tokenIds);
  const caches: LayerCache[] = [];
  for (let layerIndex = 0; layerIndex < model.shape.layerCount; layerIndex += 1) {
    if (options.recompute && options.cache === null && !options.keepCache) {
      x = recomputedDecoderLayer(model, layerIndex, x, geometry);
      continue;
    }
    const result = decoderLayer(model, layerIndex, x, geometry, options.cache?.[layerIndex] ?? null);
    x = result.output;
    if (options.keepCache) caches.push(result.cache);
  }
  const hidden = rmsNorm(x, model.parameters.finalNorm, { epsilon: model.shape.rmsNormEps }) as tf.Tensor2D;
  return { hidden, cache: options.keepCache ? caches : null };
}
