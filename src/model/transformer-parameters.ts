/**
 * Base weights of a transformer as tfjs tensors, keyed by their Hugging Face names.
 *
 * Linear weights are stored transposed ([in, out]) so `x @ W` hits XNNPACK's fast path (no
 * transpose flag) and its packed-weight cache; export transposes them back to HF's [out, in].
 * A tied lm head is a transposed copy of the embedding when frozen (same reason); when trained
 * (full fine-tuning) it must be the very same variable as the embedding, so it is read with
 * `transposeB` instead.
 */
import * as tf from '@tensorflow/tfjs';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { FloatTensorData } from './safetensors.js';
import type { TransformerShape } from './transformer-shape.js';

export interface LinearParameters {
  /** [in, out]. */
  weight: tf.Tensor2D;
  bias: tf.Tensor1D | null;
}

export interface LayerParameters {
  inputNorm: tf.Tensor1D;
  q: LinearParameters;
  k: LinearParameters;
  v: LinearParameters;
  o: LinearParameters;
  qNorm: tf.Tensor1D | null;
  kNorm: tf.Tensor1D | null;
  postAttentionNorm: tf.Tensor1D;
  gate: LinearParameters;
  up: LinearParameters;
  down: LinearParameters;
}

export interface LanguageModelHead {
  matrix: tf.Tensor2D;
  /** True when `matrix` is the [V, d] embedding itself (tied and trained). */
  transposed: boolean;
  /**
   * The same weights in the other layout, when it exists anyway (a frozen tied head's [V, d]
   * embedding): the backward product g·Wᵀ then needs no transpose of a [d, V] matrix per call.
   */
  otherLayout: tf.Tensor2D | null;
}

export interface TransformerParameters {
  /** [V, d]. */
  embedTokens: tf.Tensor2D;
  layers: LayerParameters[];
  finalNorm: tf.Tensor1D;
  lmHead: LanguageModelHead;
  /** Every stored tensor by HF name, in checkpoint order; linear weights are in [in, out] layout. */
  byName: Map<string, tf.Tensor>;
  /** HF names whose stored tensor is the transpose of the HF tensor. */
  transposedNames: Set<string>;
  /** Variables (full fine-tuning) or constants. */
  trainable: boolean;
}

export const linearModuleNames = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type LinearModuleName = (typeof linearModuleNames)[number];

export function linearModulePath(layer: number, module: LinearModuleName): string {
  const block = module === 'gate_proj' || module === 'up_proj' || module === 'down_proj' ? 'mlp' : 'self_attn';
  return `model.layers.${layer}.${block}.${module}`;
}

/** [out, in] of each linear module in HF layout. */
export function linearModuleShape(shape: TransformerShape, module: LinearModuleName): [number, number] {
  const { hiddenSize: d, intermediateSize: f, headDim, headCount, keyValueHeadCount } = shape;
  switch (module) {
    case 'q_proj':
      return [headCount * headDim, d];
    case 'k_proj':
    case 'v_proj':
      return [keyValueHeadCount * headDim, d];
    case 'o_proj':
      return [d, headCount * headDim];
    case 'gate_proj':
    case 'up_proj':
      return [f, d];
    case 'down_proj':
      return [d, f];
  }
}

function hasBias(shape: TransformerShape, module: LinearModuleName): boolean {
  if (module === 'q_proj' || module === 'k_proj' || module === 'v_proj') return shape.qkvBias;
  if (module === 'o_proj') return shape.outputBias;
  return shape.mlpBias;
}

/** Every HF tensor name the shape needs, with its HF shape. */
export function expectedTensorShapes(shape: TransformerShape): Map<string, number[]> {
  const expected = new Map<string, number[]>();
  expected.set('model.embed_tokens.weight', [shape.vocabSize, shape.hiddenSize]);
  for (let layer = 0; layer < shape.layerCount; layer += 1) {
    expected.set(`model.layers.${layer}.input_layernorm.weight`, [shape.hiddenSize]);
    for (const module of linearModuleNames) {
      const [out, input] = linearModuleShape(shape, module);
      expected.set(`${linearModulePath(layer, module)}.weight`, [out, input]);
      if (hasBias(shape, module)) expected.set(`${linearModulePath(layer, module)}.bias`, [out]);
    }
    if (shape.qkNorm) {
      expected.set(`model.layers.${layer}.self_attn.q_norm.weight`, [shape.headDim]);
      expected.set(`model.layers.${layer}.self_attn.k_norm.weight`, [shape.headDim]);
    }
    expected.set(`model.layers.${layer}.post_attention_layernorm.weight`, [shape.hiddenSize]);
  }
  expected.set('model.norm.weight', [shape.hiddenSize]);
  if (!shape.tieWordEmbeddings) expected.set('lm_head.weight', [shape.vocabSize, shape.hiddenSize]);
  return expected;
}

/**
 * Builds the parameters from HF-named float32 data. Unknown extra tensors are ignored (rotary
 * caches, `lm_head.weight` duplicated in a tied checkpoint); missing or mis-shaped ones throw.
 */
export function createTransformerParameters(
  shape: TransformerShape,
  tensors: ReadonlyMap<string, FloatTensorData>,
  options: { trainable: boolean },
): TransformerParameters {
  const byName = new Map<string, tf.Tensor>();
  const transposedNames = new Set<string>();
  for (const [name, expectedShape] of expectedTensorShapes(shape)) {
    const source = tensors.get(name);
    if (source === undefined) throw new ClawrlError('configuration_error', `model weights: tensor '${name}' is missing`);
    if (source.shape.length !== expectedShape.length || source.shape.some((size, axis) => size !== expectedShape[axis])) {
      throw new ClawrlError(
        'configuration_error',
        `model weights: tensor '${name}' has shape ${JSON.stringify(source.shape)}, expected ${JSON.stringify(expectedShape)}`,
      );
    }
    const isLinearWeight = name.endsWith('_proj.weight') || name === 'lm_head.weight';
    const tensor = tf.tidy(() => {
      const loaded = tf.tensor(source.data, source.shape, 'float32');
      return isLinearWeight ? tf.transpose(loaded) : loaded;
    });
    if (isLinearWeight) transposedNames.add(name);
    byName.set(name, options.trainable ? tf.variable(tensor, true) : tensor);
    if (options.trainable) tensor.dispose();
  }
  return assembleParameters(shape, byName, transposedNames, options.trainable);
}

function assembleParameters(
  shape: TransformerShape,
  byName: Map<string, tf.Tensor>,
  transposedNames: Set<string>,
  trainable: boolean,
): TransformerParameters {
  const get = <T extends tf.Tensor = tf.Tensor1D>(name: string): T => {
    const tensor = byName.get(name);
    if (tensor === undefined) throw new ClawrlError('internal_error', `model weights: '${name}' not loaded`);
    return tensor as T;
  };
  const linear = (layer: number, module: LinearModuleName): LinearParameters => {
    const path = linearModulePath(layer, module);
    return { weight: get<tf.Tensor2D>(`${path}.weight`), bias: hasBias(shape, module) ? get<tf.Tensor1D>(`${path}.bias`) : null };
  };
  const layers: LayerParameters[] = [];
  for (let layer = 0; layer < shape.layerCount; layer += 1) {
    const prefix = `model.layers.${layer}`;
    layers.push({
      inputNorm: get(`${prefix}.input_layernorm.weight`),
      q: linear(layer, 'q_proj'),
      k: linear(layer, 'k_proj'),
      v: linear(layer, 'v_proj'),
      o: linear(layer, 'o_proj'),
      qNorm: shape.qkNorm ? get<tf.Tensor1D>(`${prefix}.self_attn.q_norm.weight`) : null,
      kNorm: shape.qkNorm ? get<tf.Tensor1D>(`${prefix}.self_attn.k_norm.weight`) : null,
      postAttentionNorm: get(`${prefix}.post_attention_layernorm.weight`),
      gate: linear(layer, 'gate_proj'),
      up: linear(layer, 'up_proj'),
      down: linear(layer, 'down_proj'),
    });
  }
  const embedTokens = get<tf.Tensor2D>('model.embed_tokens.weight');
  let lmHead: LanguageModelHead;
  if (!shape.tieWordEmbeddings) lmHead = { matrix: get<tf.Tensor2D>('lm_head.weight'), transposed: false, otherLayout: null };
  else if (trainable) lmHead = { matrix: embedTokens, transposed: true, otherLayout: null };
  else lmHead = { matrix: tf.transpose(embedTokens), transposed: false, otherLayout: embedTokens };
  return { embedTokens, layers, finalNorm: get('model.norm.weight'), lmHead, byName, transposedNames, trainable };
}

/** The weights in HF names and layout, e.g. for a full-weights safetensors export. */
export async function exportParameters(parameters: TransformerParameters): Promise<Map<string, FloatTensorData>> {
  const out = new Map<string, FloatTensorData>();
  for (const [name, tensor] of parameters.byName) {
    const hfLayout = parameters.transposedNames.has(name) ? tf.transpose(tensor) : tensor;
    const data = (await hfLayout.data()) as Float32Array;
    out.set(name, { shape: hfLayout.shape.slice(), data: new Float32Array(data) });
    if (hfLayout !== tensor) hfLayout.dispose();
  }
  return out;
}

export function disposeParameters(parameters: TransformerParameters): void {
  const owned = new Set<tf.Tensor>(parameters.byName.values());
  owned.add(parameters.lmHead.matrix);
  for (const tensor of owned) tensor.dispose();
}
