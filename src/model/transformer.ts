/**
 * The compute side of a Llama / Qwen2 / Qwen3 model on tfjs, as the local engine worker uses it.
 * Call `initializeTensorBackend` (src/tensor) first; one instance per worker thread.
 *
 *   const transformer = loadTransformer({ shape, weights, trainParams: 'lora', lora: { rank: 16, alpha: 32,
 *     targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] } });
 *   // or: await loadTransformerFromFolder('/path/to/hf-model', options)
 *   const { sequences } = await transformer.sample({ promptTokenIds, n: 8, maxTokens: 128, temperature: 0.7,
 *     topP: 0.95, topK: 0, seed: 1, stopTokenIds: [eos], onToken: (event) => { ... } });
 *   const scored = await transformer.score({ promptTokenIds, continuationTokenIds, topLogprobs: 4 });
 *   const optimizer = transformer.createOptimizer({ learningRate: 1e-4, weightDecay: 0.01, maxGradientNorm: 1 });
 *   await transformer.forwardBackward({ sequences: [{ tokenIds, targetStart: promptLength }], loss, temperature: 0.7 });
 *   optimizer.step();                                  // AdamW on the accumulated gradients, then clears them
 *   const files = await transformer.exportAdapter({ baseModelNameOrPath });   // PEFT folder files
 *   transformer.importAdapter(files);                  // serve another policy version
 *   const bytes = await transformer.exportFullWeights({ dtype: 'BF16' });     // model.safetensors, HF names
 *
 * Log-prob conventions (they must agree between sampler and trainer for importance ratios):
 * sampling records log_softmax(logits / temperature) of the sampled token before top-k/top-p
 * truncation (temperature 0: the untempered distribution); `score` and `forwardBackward` take a
 * `temperature` and compute the same quantity, so pass the sampling temperature to compare like
 * with like.
 *
 * `trainParams: 'lora'` trains only the adapter (the base weights stay constants);
 * `'full'` turns every base weight into a variable (and then there is no adapter).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { ClawrlError } from '../spec/clawrl-error.js';
import { ensureFits } from '../tensor/index.js';
import { createAdamW } from './adamw.js';
import type { AdamWOptions, AdamWState, AdamWStepResult } from './adamw.js';
import { createLoraAdapter, exportPeftAdapter, importPeftAdapter } from './lora-adapter.js';
import type { LoraAdapter, LoraOptions } from './lora-adapter.js';
import { readSafetensorsFolder, writeSafetensors } from './safetensors.js';
import type { FloatTensorData, SafetensorsWriteDtype } from './safetensors.js';
import { ropeInverseFrequencies } from './transformer-forward.js';
import type { ForwardModel } from './transformer-forward.js';
import { createTransformerParameters, disposeParameters, exportParameters } from './transformer-parameters.js';
import { createGradientAccumulator } from './transformer-training.js';
import type { ForwardBackwardRequest, ForwardBackwardResult, TrainableSet } from './transformer-training.js';
import { createPrefixCache } from './prefix-cache.js';
import { createContinuousBatcher } from './continuous-batcher.js';
import { scoreContinuation } from './transformer-scoring.js';
import type { ScoreRequest, ScoreResult } from './transformer-scoring.js';
import type { ContinuousBatcherOptions } from './continuous-batcher.js';
import type { SampleRequest, SampleResult } from './transformer-sampler.js';
import { parameterCount, transformerShapeFromHuggingFaceConfig, validateTransformerShape } from './transformer-shape.js';
import type { TransformerShape } from './transformer-shape.js';

export type TrainParams = 'lora' | 'full';

export interface LoadTransformerOptions {
  shape: TransformerShape;
  /** HF-named float32 tensors (from `readSafetensorsFolder`). */
  weights: ReadonlyMap<string, FloatTensorData>;
  trainParams?: TrainParams;
  /** The adapter to create when `trainParams` is 'lora' (B = 0, so the model starts unchanged). */
  lora?: LoraOptions;
  /** Seed of the fresh adapter's A matrices. */
  loraSeed?: number;
  /** Budget of the prompt-prefix KV cache sampling keeps (`prefix-cache.ts`); default 256 MiB, 0 turns it off. */
  prefixCacheBytes?: number;
  /** Continuous batching of sampling requests (`continuous-batcher.ts`); defaults: `defaultBatching`. */
  batching?: Partial<Omit<ContinuousBatcherOptions, 'prefixCache'>>;
}

export type { ScoreRequest, ScoreResult } from './transformer-scoring.js';

export interface TransformerOptimizer {
  /** Applies AdamW to the accumulated gradients, then clears them. */
  step(learningRate?: number): AdamWStepResult;
  /** Step count and moments, for checkpoints (layout internal to this engine). */
  exportState(): Promise<AdamWState>;
  importState(state: AdamWState): void;
  dispose(): void;
}

export interface Transformer {
  readonly shape: TransformerShape;
  readonly trainParams: TrainParams;
  /** The active adapter, or null ('full' mode). */
  readonly adapter: LoraAdapter | null;
  /** Joins the running batch: concurrent calls decode together, each as it would alone. */
  sample(request: SampleRequest): Promise<SampleResult>;
  /** Resolves once no sampling runs or waits (weights must not change while requests decode). */
  whenSamplingIdle(): Promise<void>;
  /** Sequences in the running batch and requests waiting to join it. */
  readonly samplingLoad: { runningSequences: number; waitingRequests: number };
  score(request: ScoreRequest): Promise<ScoreResult>;
  forwardBackward(request: ForwardBackwardRequest): Promise<ForwardBackwardResult>;
  /** Accumulated gradients in exported layout and names (PEFT or HF). */
  gradients(): Promise<Map<string, FloatTensorData>>;
  clearGradients(): void;
  /** Replaces the accumulated gradients (names and layout of `gradients()`), e.g. a data-parallel average. */
  setGradients(gradients: ReadonlyMap<string, FloatTensorData>): void;
  createOptimizer(options: AdamWOptions): TransformerOptimizer;
  exportAdapter(options: { baseModelNameOrPath: string; dtype?: SafetensorsWriteDtype }): Promise<Record<string, Uint8Array>>;
  /**
   * A PEFT adapter (`files`) to sample and score with beside the active one, on the same base
   * weights (`SampleRequest.adapter`, `ScoreRequest.adapter`): requests of several adapters decode in
   * one batch. Only in 'lora' mode; lives until `unloadAdapter` or until this transformer is disposed.
   */
  loadAdapter(files: Record<string, Uint8Array>): LoraAdapter;
  /** Disposes an adapter of `loadAdapter` and its kept prompt prefixes; no request may still use it. */
  unloadAdapter(adapter: LoraAdapter): void;
  /** Replaces the adapter (and drops accumulated gradients). Only in 'lora' mode. */
  importAdapter(files: Record<string, Uint8Array>): void;
  /** Every weight under its HF name, a LoRA adapter merged in; a `model.safetensors` file. */
  exportFullWeights(options?: { dtype?: SafetensorsWriteDtype }): Promise<Uint8Array>;
  dispose(): void;
}

/** The batching defaults (`--max-running-sequences`, `--kv-cache`, `--prefill-chunk` in the configuration). */
export const defaultBatching: Omit<ContinuousBatcherOptions, 'prefixCache'> = { maxRunningSequences: 16, kvCacheBytes: 256 * 1024 * 1024, prefillChunkTokens: 64 };

const defaultLora: LoraOptions = { rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] };

export function loadTransformer(options: LoadTransformerOptions): Transformer {
  const { shape } = options;
  validateTransformerShape(shape);
  const trainParams = options.trainParams ?? 'lora';
  const weightBytes = parameterCount(shape) * 4;
  // Weights, XNNPACK's packed copy of each, and in full mode a gradient and two Adam moments.
  ensureFits(weightBytes * (trainParams === 'full' ? 5 : 2), { code: 'unsupported', purpose: 'loading the model weights' });
  const parameters = createTransformerParameters(shape, options.weights, { trainable: trainParams === 'full' });
  let adapter: LoraAdapter | null = trainParams === 'lora' ? createLoraAdapter(shape, options.lora ?? defaultLora, options.loraSeed) : null;
  const model = (): ForwardModel => ({ shape, parameters, lora: adapter, inverseFrequencies });
  const inverseFrequencies = ropeInverseFrequencies(shape);
  const accumulator = createGradientAccumulator();
  /** Adapters of `loadAdapter`, disposed with the transformer. */
  const loadedAdapters = new Set<LoraAdapter>();
  // Kept KV belongs to the weights it was computed with: cleared whenever they change.
  const prefixCacheBytes = options.prefixCacheBytes ?? 256 * 1024 * 1024;
  const prefixCache = prefixCacheBytes > 0 ? createPrefixCache({ maxBytes: prefixCacheBytes, minimumLength: 32 }) : null;
  const batcher = createContinuousBatcher(model, { ...defaultBatching, ...options.batching, prefixCache });
  const trainable = (): TrainableSet => {
    if (adapter !== null) return { variables: adapter.variables, transposedNames: new Set(adapter.variables.keys()) };
    const variables = new Map<string, tf.Variable>();
    for (const [name, tensor] of parameters.byName) variables.set(name, tensor as tf.Variable);
    return { variables, transposedNames: parameters.transposedNames };
  };

  return {
    shape,
    trainParams,
    get adapter() {
      return adapter;
    },
    sample: (request) => batcher.sample(request),
    whenSamplingIdle: () => batcher.whenIdle(),
    get samplingLoad() {
      return batcher.load;
    },
    score: (request) => scoreContinuation(request.adapter === undefined ? model() : { ...model(), lora: request.adapter }, prefixCache, request),
    forwardBackward: (request) => accumulator.forwardBackward(model(), trainable(), request),
    gradients: () => accumulator.exportGradients(trainable()),
    clearGradients: () => accumulator.clear(),
    setGradients: (gradients) => accumulator.importGradients(trainable(), gradients),
    createOptimizer(optimizerOptions) {
      const adamW = createAdamW(optimizerOptions);
      return {
        step(learningRate) {
          const result = adamW.step(trainable().variables, accumulator.gradients, learningRate);
          accumulator.clear();
          prefixCache?.clear();
          return result;
        },
        exportState: () => adamW.exportState(),
        importState: (state) => adamW.importState(state),
        dispose: () => adamW.dispose(),
      };
    },
    exportAdapter(exportOptions) {
      if (adapter === null) throw new ClawrlError('unsupported', 'no LoRA adapter: the model trains all parameters');
      return exportPeftAdapter(adapter, exportOptions);
    },
    loadAdapter(files) {
      if (trainParams !== 'lora') throw new ClawrlError('unsupported', 'adapters can only be loaded in lora mode');
      const loaded = importPeftAdapter(shape, files);
      loadedAdapters.add(loaded);
      return loaded;
    },
    unloadAdapter(loaded) {
      if (!loadedAdapters.delete(loaded)) return;
      prefixCache?.forget(loaded);
      loaded.dispose();
    },
    importAdapter(files) {
      if (trainParams !== 'lora') throw new ClawrlError('unsupported', 'adapters can only be loaded in lora mode');
      const next = importPeftAdapter(shape, files);
      accumulator.clear();
      adapter?.dispose();
      adapter = next;
      prefixCache?.clear();
    },
    async exportFullWeights(exportOptions = {}) {
      const tensors = await exportParameters(parameters);
      if (adapter !== null) {
        for (const [path, module] of adapter.modules) {
          const name = `${path}.weight`;
          const base = tensors.get(name);
          if (base === undefined) continue;
          const merged = tf.tidy(() =>
            tf.add(tf.tensor(base.data, base.shape), tf.transpose(tf.mul(tf.matMul(module.a, module.b), adapter?.scale ?? 0))),
          );
          tensors.set(name, { shape: base.shape, data: new Float32Array(await merged.data()) });
          merged.dispose();
        }
      }
      return writeSafetensors(tensors, { dtype: exportOptions.dtype ?? 'F32' });
    },
    dispose() {
      accumulator.clear();
      prefixCache?.clear();
      adapter?.dispose();
      for (const loaded of loadedAdapters) loaded.dispose();
      loadedAdapters.clear();
      disposeParameters(parameters);
    },
  };
}

/** Loads `config.json` and the safetensors weights (single or sharded) of an HF model folder. */
export async function loadTransformerFromFolder(
  folder: string,
  options: Omit<LoadTransformerOptions, 'shape' | 'weights'> = {},
): Promise<Transformer> {
  let configJson: unknown;
  try {
    configJson = JSON.parse(await readFile(join(folder, 'config.json'), 'utf8'));
  } catch (error) {
    throw new ClawrlError('configuration_error', `cannot read ${folder}/config.json`, { cause: error });
  }
  const shape = transformerShapeFromHuggingFaceConfig(configJson);
  const { tensors } = await readSafetensorsFolder(folder);
  return loadTransformer({ ...options, shape, weights: tensors });
}
