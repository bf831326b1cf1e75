/**
 * Depth growth by block expansion (LLaMA Pro, Wu et al. 2024): a trained model gets new decoder
 * layers, each a copy of the layer before it with its two output projections (`o_proj`,
 * `down_proj`) set to zero. A zeroed block adds nothing to the residual stream, so the grown model
 * computes exactly what the smaller one did and training continues from there instead of from
 * random weights — how a deeper built-in model is reached without hours from scratch.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { FloatTensorData } from '../../model/safetensors.js';
import type { TensorMap } from './pretrain-worker-protocol.js';

const layerPattern = /^model\.layers\.(\d+)\.(.+)$/;
const zeroedSuffixes = ['self_attn.o_proj.weight', 'self_attn.o_proj.bias', 'mlp.down_proj.weight', 'mlp.down_proj.bias'];

/**
 * For each layer of the grown model, the old layer it copies and whether it is a new (zeroed)
 * copy; new layers are spread evenly, each after the old layer it copies.
 */
export function expansionPlan(fromLayers: number, toLayers: number): Array<{ source: number; added: boolean }> {
  if (!(Number.isInteger(toLayers) && toLayers >= fromLayers)) {
    throw new ClawrlError('configuration_error', `cannot grow a ${fromLayers}-layer model to ${toLayers} layers`);
  }
  const added = toLayers - fromLayers;
  const plan: Array<{ source: number; added: boolean }> = [];
  for (let layer = 0; layer < fromLayers; layer += 1) {
    plan.push({ source: layer, added: false });
    // Copies go after every (fromLayers / added)-th layer, the last one after the top layer.
    const copiesHere = Math.floor(((layer + 1) * added) / fromLayers) - Math.floor((layer * added) / fromLayers);
    for (let copy = 0; copy < copiesHere; copy += 1) plan.push({ source: layer, added: true });
  }
  return plan;
}

export function expandLayers(weights: TensorMap, fromLayers: number, toLayers: number): TensorMap {
  const perLayer = new Map<number, Map<string, FloatTensorData>>();
  const expanded: TensorMap = new Map();
  for (const [name, tensor] of weights) {
    const match = layerPattern.exec(name);
    if (match === null) {
      expanded.set(name, tensor);
      continue;
    }
    const layer = Number(match[1]);
    if (layer >= fromLayers) throw new ClawrlError('configuration_error', `weights have a layer ${layer} beyond the ${fromLayers} the config names`);
    const tensors = perLayer.get(layer) ?? new Map<string, FloatTensorData>();
    tensors.set(match[2] ?? '', tensor);
    perLayer.set(layer, tensors);
  }
  expansionPlan(fromLayers, toLayers).forEach(({ source, added }, layer) => {
    const tensors = perLayer.get(source);
    if (tensors === undefined) throw new ClawrlError('configuration_error', `weights lack layer ${source}`);
    for (const [suffix, tensor] of tensors) {
      const data = added && zeroedSuffixes.includes(suffix) ? new Float32Array(tensor.data.length) : Float32Array.from(tensor.data);
      expanded.set(`model.layers.${layer}.${suffix}`, { shape: [...tensor.shape], data });
    }
  });
  return expanded;
}
