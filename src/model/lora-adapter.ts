/**
 * LoRA adapters in PEFT semantics: y = x·Wᵀ + (x·Aᵀ)·Bᵀ · alpha/r, with A [r, in] initialised
 * like PEFT (kaiming-uniform, bound 1/sqrt(in)) and B [out, r] zero, so a fresh adapter leaves
 * the model unchanged. Stored transposed (A as [in, r], B as [r, out]) for the same fast-matmul
 * reason as the base weights; import/export use PEFT's names and layout, which vLLM and SGLang
 * load: `base_model.model.model.layers.{i}.self_attn.q_proj.lora_A.weight`.
 */
import * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';
import { readSafetensors, writeSafetensors } from './safetensors.js';
import type { FloatTensorData, SafetensorsWriteDtype } from './safetensors.js';
import { createSeededRandom } from '../core/seeded-random.js';
import { linearModuleNames, linearModulePath, linearModuleShape } from './transformer-parameters.js';
import type { LinearModuleName } from './transformer-parameters.js';
import type { TransformerShape } from './transformer-shape.js';

export interface LoraOptions {
  rank: number;
  alpha: number;
  targetModules: LinearModuleName[];
}

export interface LoraModule {
  /** [in, r]: PEFT's lora_A transposed. */
  a: tf.Variable;
  /** [r, out]: PEFT's lora_B transposed. */
  b: tf.Variable;
}

export interface LoraAdapter {
  readonly options: LoraOptions;
  /** alpha / r. */
  readonly scale: number;
  /** By module path, e.g. `model.layers.0.self_attn.q_proj`. */
  readonly modules: ReadonlyMap<string, LoraModule>;
  /** Every variable by its PEFT tensor name, in a stable order. */
  readonly variables: ReadonlyMap<string, tf.Variable>;
  dispose(): void;
}

const loraOptionsSchema = z.object({
  rank: z.number().int().positive(),
  alpha: z.number().positive(),
  targetModules: z.array(z.enum(linearModuleNames)).min(1),
});

const adapterConfigSchema = z.object({
  peft_type: z.literal('LORA'),
  r: z.number().int().positive(),
  lora_alpha: z.number().positive(),
  target_modules: z.union([z.array(z.string()), z.string()]),
  use_rslora: z.boolean().optional(),
  use_dora: z.boolean().optional(),
  bias: z.string().optional(),
  modules_to_save: z.array(z.string()).nullable().optional(),
  rank_pattern: z.record(z.string(), z.unknown()).optional(),
  alpha_pattern: z.record(z.string(), z.unknown()).optional(),
});

export function peftTensorName(modulePath: string, factor: 'A' | 'B'): string {
  return `base_model.model.${modulePath}.lora_${factor}.weight`;
}

function buildAdapter(
  shape: TransformerShape,
  options: LoraOptions,
  initial: (modulePath: string, module: LinearModuleName) => { a: tf.Tensor2D; b: tf.Tensor2D },
): LoraAdapter {
  const modules = new Map<string, LoraModule>();
  const variables = new Map<string, tf.Variable>();
  for (let layer = 0; layer < shape.layerCount; layer += 1) {
    for (const module of linearModuleNames) {
      if (!options.targetModules.includes(module)) continue;
      const path = linearModulePath(layer, module);
      const values = initial(path, module);
      const entry = { a: tf.variable(values.a, true), b: tf.variable(values.b, true) };
      values.a.dispose();
      values.b.dispose();
      modules.set(path, entry);
      variables.set(peftTensorName(path, 'A'), entry.a);
      variables.set(peftTensorName(path, 'B'), entry.b);
    }
  }
  return {
    options,
    scale: options.alpha / options.rank,
    modules,
    variables,
    dispose: () => {
      for (const variable of variables.values()) variable.dispose();
    },
  };
}

/** A fresh adapter (B = 0); `seed` makes A reproducible. */
export function createLoraAdapter(shape: TransformerShape, options: LoraOptions, seed = 0): LoraAdapter {
  const checked = loraOptionsSchema.parse(options);
  const random = createSeededRandom(seed);
  return buildAdapter(shape, checked, (_path, module) => {
    const [out, input] = linearModuleShape(shape, module);
    const bound = 1 / Math.sqrt(input);
    const a = new Float32Array(input * checked.rank);
    for (let index = 0; index < a.length; index += 1) a[index] = (random.next() * 2 - 1) * bound;
    return { a: tf.tensor2d(a, [input, checked.rank]), b: tf.zeros([checked.rank, out]) };
  });
}

/** `adapter_config.json` + `adapter_model.safetensors`, as PEFT writes them. */
export async function exportPeftAdapter(
  adapter: LoraAdapter,
  options: { baseModelNameOrPath: string; dtype?: SafetensorsWriteDtype },
): Promise<Record<string, Uint8Array>> {
  const tensors = new Map<string, FloatTensorData>();
  for (const [name, variable] of adapter.variables) {
    const peftLayout = tf.transpose(variable);
    tensors.set(name, { shape: peftLayout.shape.slice(), data: new Float32Array(await peftLayout.data()) });
    peftLayout.dispose();
  }
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: options.baseModelNameOrPath,
    r: adapter.options.rank,
    lora_alpha: adapter.options.alpha,
    lora_dropout: 0,
    bias: 'none',
    fan_in_fan_out: false,
    target_modules: adapter.options.targetModules,
    modules_to_save: null,
    rank_pattern: {},
    alpha_pattern: {},
    use_rslora: false,
    use_dora: false,
    inference_mode: true,
    init_lora_weights: true,
  };
  return {
    'adapter_config.json': new TextEncoder().encode(`${JSON.stringify(config, null, 2)}\n`),
    'adapter_model.safetensors': writeSafetensors(tensors, { dtype: options.dtype ?? 'F32' }),
  };
}

function invalidAdapter(message: string): ClawrlError {
  return new ClawrlError('invalid_request', `LoRA adapter: ${message}`);
}

/** Loads a PEFT adapter folder's files; rejects features that would change the math (rsLoRA, DoRA, patterns). */
export function importPeftAdapter(shape: TransformerShape, files: Record<string, Uint8Array>): LoraAdapter {
  const configBytes = files['adapter_config.json'];
  const weightBytes = files['adapter_model.safetensors'];
  if (configBytes === undefined || weightBytes === undefined) {
    throw invalidAdapter('needs adapter_config.json and adapter_model.safetensors');
  }
  let configJson: unknown;
  try {
    configJson = JSON.parse(new TextDecoder().decode(configBytes));
  } catch (error) {
    throw new ClawrlError('invalid_request', 'LoRA adapter: adapter_config.json is not JSON', { cause: error });
  }
  const parsed = adapterConfigSchema.safeParse(configJson);
  if (!parsed.success) throw invalidAdapter(`bad adapter_config.json: ${parsed.error.message}`);
  const config = parsed.data;
  if (config.use_rslora === true || config.use_dora === true) throw new ClawrlError('unsupported', 'LoRA adapter: rsLoRA and DoRA are not supported');
  if (Object.keys(config.rank_pattern ?? {}).length > 0 || Object.keys(config.alpha_pattern ?? {}).length > 0) {
    throw new ClawrlError('unsupported', 'LoRA adapter: rank_pattern/alpha_pattern are not supported');
  }
  if ((config.modules_to_save ?? []).length > 0) throw new ClawrlError('unsupported', 'LoRA adapter: modules_to_save is not supported');
  if (config.bias !== undefined && config.bias !== 'none') throw new ClawrlError('unsupported', `LoRA adapter: bias '${config.bias}' is not supported`);
  const rawTargets = typeof config.target_modules === 'string' ? [config.target_modules] : config.target_modules;
  const targetModules = rawTargets.map((target) => {
    const module = linearModuleNames.find((name) => name === target);
    if (module === undefined) throw new ClawrlError('unsupported', `LoRA adapter: target module '${target}' is not supported`);
    return module;
  });
  const { tensors } = readSafetensors(weightBytes);
  const options = { rank: config.r, alpha: config.lora_alpha, targetModules };
  const adapter = buildAdapter(shape, options, (path, module) => {
    const [out, input] = linearModuleShape(shape, module);
    const a = tensors.get(peftTensorName(path, 'A'));
    const b = tensors.get(peftTensorName(path, 'B'));
    if (a === undefined || b === undefined) throw invalidAdapter(`tensors for ${path} are missing`);
    if (a.shape[0] !== config.r || a.shape[1] !== input || b.shape[0] !== out || b.shape[1] !== config.r) {
      throw invalidAdapter(`tensors for ${path} have shapes ${JSON.stringify(a.shape)}/${JSON.stringify(b.shape)}`);
    }
    return tf.tidy(() => ({
      a: tf.transpose(tf.tensor2d(a.data, [config.r, input])),
      b: tf.transpose(tf.tensor2d(b.data, [out, config.r])),
    }));
  });
  const expectedCount = adapter.variables.size;
  const present = [...tensors.keys()].filter((name) => name.includes('.lora_')).length;
  if (present !== expectedCount) {
    adapter.dispose();
    throw invalidAdapter(`has ${present} LoRA tensors where the config implies ${expectedCount}`);
  }
  return adapter;
}
