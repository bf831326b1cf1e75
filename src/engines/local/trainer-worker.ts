/**
 * The trainer worker: a second wasm tensor instance (one per core) that owns the trainable copy
 * of the policy, its AdamW state and, when the KL term or the anchor is on, a frozen base model
 * for reference log-probs. It runs beside the sampler worker, so a training step never blocks sampling.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { decoupledFormOf, defaultAnchorTopK } from '../../core/rl/policy-loss.js';
import { anchorKlOf, anchorOfTopLogprobs, createPolicyGradientLoss } from '../../model/policy-gradient-loss.js';
import { readSafetensors } from '../../model/safetensors.js';
import { loadTransformer, loadTransformerFromFolder, type Transformer, type TransformerOptimizer } from '../../model/transformer.js';
import { transformerShapeFromHuggingFaceConfig } from '../../model/transformer-shape.js';
import { initializeTensorBackend } from '../../tensor/initialize-tensor-backend.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyArtifact } from '../../spec/inference-engine.js';
import type { ForwardBackwardInput, ForwardBackwardOutput, OptimizerStepOutput, TrainingDatum } from '../../spec/training-engine.js';
import type { WireError } from './local-engine-protocol.js';
import { readTrainerCheckpoint, writeTrainerCheckpoint } from './trainer-checkpoint.js';
import type { TrainerMessage, TrainerRequest, TrainerResult, TrainerWorkerData } from './trainer-worker-protocol.js';

const port = parentPort;
if (port === null) throw new Error('trainer-worker must run in a worker thread');
const data = workerData as TrainerWorkerData;
const loadOptions = { trainParams: data.trainParams, lora: data.lora };
/** Tokens per forward-backward call: bounds activation memory whatever the batch size. */
const microBatchTokens = 4096;

function post(message: TrainerMessage): void {
  port?.postMessage(message);
}

function wireError(error: unknown): WireError {
  if (ClawrlError.isInstance(error)) return { code: error.code, message: error.message, ...(error.param ? { param: error.param } : {}) };
  return { code: 'internal_error', message: error instanceof Error ? error.message : String(error) };
}

let transformer: Transformer;
let optimizer: TransformerOptimizer;
let reference: Transformer | null = null;
let baseAdapter: Record<string, Uint8Array> | null = null;

function replaceTransformer(next: Transformer): void {
  optimizer?.dispose();
  transformer?.dispose();
  transformer = next;
  optimizer = transformer.createOptimizer(data.optimizer);
}

/** Full-mode weights from a `model.safetensors` file, or the base model from its folder. */
async function loadWeights(modelFile: Uint8Array | undefined): Promise<Transformer> {
  if (modelFile === undefined) return loadTransformerFromFolder(data.modelDirectory, loadOptions);
  const shape = transformerShapeFromHuggingFaceConfig(JSON.parse(await readFile(path.join(data.modelDirectory, 'config.json'), 'utf8')));
  return loadTransformer({ shape, weights: readSafetensors(modelFile).tensors, ...loadOptions });
}

/** Groups data by temperature (one forward-backward call takes one) and splits them to bound memory. */
function microBatches(batch: TrainingDatum[]): TrainingDatum[][] {
  const groups = new Map<number, TrainingDatum[][]>();
  for (const datum of batch) {
    const chunks = groups.get(datum.temperature) ?? [[]];
    groups.set(datum.temperature, chunks);
    const last = chunks.at(-1) ?? [];
    const tokens = last.reduce((total, item) => total + item.promptTokenIds.length + item.responseTokenIds.length, 0);
    if (last.length > 0 && tokens + datum.promptTokenIds.length + datum.responseTokenIds.length > microBatchTokens) chunks.push([datum]);
    else last.push(datum);
  }
  return [...groups.values()].flat();
}

/** The base model's log-probs of the response and, for the anchor, its `topK` likeliest tokens at each position. */
async function referenceScore(datum: TrainingDatum, topK: number): Promise<{ logprobs: number[]; top: { tokenId: number; logprob: number }[][] }> {
  reference ??= await loadTransformerFromFolder(data.modelDirectory, { trainParams: 'lora', lora: data.lora });
  return reference.score({ promptTokenIds: datum.promptTokenIds, continuationTokenIds: datum.responseTokenIds, temperature: datum.temperature, topLogprobs: topK });
}

async function forwardBackward(input: ForwardBackwardInput): Promise<ForwardBackwardOutput> {
  const { options: lossOptions, proximalIsRollout } = decoupledFormOf(input.loss);
  const anchorCoefficient = lossOptions.anchorCoefficient ?? 0;
  const anchorTopK = anchorCoefficient > 0 ? (lossOptions.anchorTopK ?? defaultAnchorTopK) : 0;
  if (anchorCoefficient > 0 && !(Number.isInteger(anchorTopK) && anchorTopK >= 1)) throw new ClawrlError('invalid_request', 'anchorTopK must be a positive integer', { param: 'anchorTopK' });
  if (proximalIsRollout && input.data.some((datum) => datum.proximalLogprobs !== undefined || datum.support !== undefined)) {
    throw new ClawrlError('unsupported', `the ${input.loss.name} loss takes the rollout as the old policy: data with proximalLogprobs or support sets need decoupled_ppo`);
  }
  const options = {
    clipLow: lossOptions.clipLow,
    clipHigh: lossOptions.clipHigh,
    importanceSamplingCap: lossOptions.importanceSamplingCap,
    klCoefficient: lossOptions.klCoefficient,
    anchorCoefficient,
  };
  const needsReference = options.klCoefficient > 0 || anchorCoefficient > 0;
  for (const datum of input.data) {
    const length = datum.responseTokenIds.length;
    if (length === 0 || datum.promptTokenIds.length === 0) throw new ClawrlError('invalid_request', 'a training datum needs a prompt and a response');
    if ([datum.lossMask, datum.advantages, datum.rolloutLogprobs].some((values) => values.length !== length)) {
      throw new ClawrlError('invalid_request', 'lossMask, advantages and rolloutLogprobs need one entry per response token');
    }
    if (!(datum.temperature > 0)) throw new ClawrlError('invalid_request', 'a training datum needs a temperature > 0');
    if (datum.support !== undefined && (datum.support.length !== length || datum.support.some((target) => target.tokenIds.length !== target.advantages.length))) {
      throw new ClawrlError('invalid_request', 'support needs one entry per response token, with one advantage per token id');
    }
    if (datum.proximalLogprobs !== undefined && datum.proximalLogprobs.length !== length) {
      throw new ClawrlError('invalid_request', 'proximalLogprobs need one entry per response token');
    }
    if (datum.support?.some((target) => target.proximalLogprobs !== undefined && target.proximalLogprobs.length !== target.tokenIds.length)) {
      throw new ClawrlError('invalid_request', "a support target's proximalLogprobs need one entry per token id");
    }
  }
  const batchLossTokens = input.batchLossTokens ?? input.data.reduce((total, datum) => total + datum.lossMask.reduce((sum, mask) => sum + mask, 0), 0);
  const logprobsByDatum = new Map<TrainingDatum, number[]>();
  const referenceByDatum = new Map<TrainingDatum, number[]>();
  const supportByDatum = new Map<TrainingDatum, number[][] | null>();
  const anchorKlByDatum = new Map<TrainingDatum, number[]>();
  let loss = 0;
  for (const chunk of microBatches(input.data)) {
    const sequences = [];
    const anchors: (ReturnType<typeof anchorOfTopLogprobs> | undefined)[] = [];
    for (const datum of chunk) {
      const scored = needsReference ? await referenceScore(datum, anchorTopK) : undefined;
      const anchor = scored !== undefined && anchorCoefficient > 0 ? anchorOfTopLogprobs(scored.top) : undefined;
      if (scored !== undefined && options.klCoefficient > 0) referenceByDatum.set(datum, scored.logprobs);
      anchors.push(anchor);
      sequences.push({
        ...datum,
        ...(proximalIsRollout ? { proximalLogprobs: datum.rolloutLogprobs } : {}),
        ...(scored === undefined || options.klCoefficient === 0 ? {} : { referenceLogprobs: scored.logprobs }),
        ...(anchor === undefined ? {} : { anchorNegativeEntropy: anchor.negativeEntropy }),
      });
    }
    const result = await transformer.forwardBackward({
      sequences: chunk.map((datum, index) => ({
        tokenIds: [...datum.promptTokenIds, ...datum.responseTokenIds],
        targetStart: datum.promptTokenIds.length,
        ...(datum.support === undefined ? {} : { supportTokenIds: datum.support.map((target) => target.tokenIds) }),
        ...(anchors[index] === undefined ? {} : { anchor: anchors[index].anchor }),
      })),
      loss: createPolicyGradientLoss(sequences, options, batchLossTokens),
      temperature: chunk[0]?.temperature ?? 1,
    });
    loss += result.loss;
    chunk.forEach((datum, index) => {
      logprobsByDatum.set(datum, result.tokenLogprobs[index] ?? []);
      supportByDatum.set(datum, result.supportLogprobs[index] ?? null);
      const anchor = anchors[index];
      const anchorLogprobs = result.anchorLogprobs[index];
      if (anchor !== undefined && anchorLogprobs !== null && anchorLogprobs !== undefined) {
        anchorKlByDatum.set(datum, anchorKlOf(anchor.negativeEntropy, anchorLogprobs));
      }
    });
  }
  return {
    loss,
    logprobs: input.data.map((datum) => logprobsByDatum.get(datum) ?? []),
    referenceLogprobs: options.klCoefficient > 0 ? input.data.map((datum) => referenceByDatum.get(datum) ?? []) : null,
    supportLogprobs: input.data.map((datum) => supportByDatum.get(datum) ?? null),
    anchorKl: anchorCoefficient > 0 ? input.data.map((datum) => anchorKlByDatum.get(datum) ?? []) : null,
  };
}

async function publish(version: number): Promise<PolicyArtifact> {
  if (transformer.trainParams === 'full') {
    return { version, kind: 'full', files: { 'model.safetensors': await transformer.exportFullWeights({ dtype: 'F32' }) } };
  }
  return { version, kind: 'adapter', files: await transformer.exportAdapter({ baseModelNameOrPath: data.modelId }) };
}

async function saveState(name: string): Promise<string> {
  const weights =
    transformer.trainParams === 'full'
      ? { 'model.safetensors': await transformer.exportFullWeights({ dtype: 'F32' }) }
      : await transformer.exportAdapter({ baseModelNameOrPath: data.modelId });
  return writeTrainerCheckpoint(data.checkpointDirectory, name, { trainParams: transformer.trainParams, weights, optimizer: await optimizer.exportState() }, data.retainedCheckpoints);
}

async function loadState(name: string): Promise<void> {
  const checkpoint = readTrainerCheckpoint(data.checkpointDirectory, name);
  if (checkpoint.trainParams !== data.trainParams) {
    throw new ClawrlError('configuration_error', `the saved training state '${name}' trains ${checkpoint.trainParams} parameters, this trainer ${data.trainParams}`);
  }
  if (data.trainParams === 'full') replaceTransformer(await loadWeights(checkpoint.weights['model.safetensors']));
  else transformer.importAdapter(checkpoint.weights);
  optimizer.importState(checkpoint.optimizer);
}

async function resetWeights(artifact: PolicyArtifact): Promise<void> {
  if (data.trainParams === 'full') {
    if (artifact.kind === 'adapter') throw new ClawrlError('unsupported', 'a full-parameter trainer cannot continue from a LoRA adapter version');
    replaceTransformer(await loadWeights(artifact.kind === 'full' ? artifact.files['model.safetensors'] : undefined));
    return;
  }
  if (artifact.kind === 'full') throw new ClawrlError('unsupported', 'a LoRA trainer cannot continue from a full-weights version');
  // The base is the fresh adapter exported at start-up (B = 0 leaves the model unchanged).
  const files = artifact.kind === 'adapter' ? artifact.files : baseAdapter;
  if (files === null) throw new ClawrlError('internal_error', 'the base adapter is missing');
  transformer.importAdapter(files);
  optimizer.dispose();
  optimizer = transformer.createOptimizer(data.optimizer);
}

async function handle(request: Exclude<TrainerRequest, { kind: 'close' }>): Promise<TrainerResult> {
  switch (request.kind) {
    case 'forward-backward':
      return forwardBackward(request.input);
    case 'optimizer-step': {
      const learningRate = request.input.learningRate ?? data.optimizer.learningRate;
      const result = optimizer.step(learningRate);
      return { gradientNorm: result.gradientNorm, step: result.step, learningRate } satisfies OptimizerStepOutput;
    }
    case 'publish':
      return publish(request.version);
    case 'save-state':
      return saveState(request.name);
    case 'load-state':
      await loadState(request.reference);
      return null;
    case 'reset-weights':
      await resetWeights(request.artifact);
      return null;
  }
}

try {
  // On Linux the nice value is per thread and pid 0 means this thread: when sampling and training
  // share a core (fewer free cores than wasm instances), the scheduler favours the sampler, so
  // training soaks up idle time instead of delaying users. Best effort elsewhere.
  try {
    setPriority(0, 19);
  } catch {
    // Not permitted or not supported: training runs at normal priority.
  }
  await initializeTensorBackend({ backend: data.backend });
  const initial = await loadTransformerFromFolder(data.modelDirectory, loadOptions);
  replaceTransformer(initial);
  if (data.trainParams === 'lora') baseAdapter = await initial.exportAdapter({ baseModelNameOrPath: data.modelId });
  post({ kind: 'ready' });
} catch (error) {
  post({ kind: 'fatal', error: wireError(error) });
  process.exit(1);
}

let queue: Promise<void> = Promise.resolve();
port.on('message', (request: TrainerRequest) => {
  if (request.kind === 'close') {
    void queue.then(() => {
      optimizer.dispose();
      transformer.dispose();
      reference?.dispose();
      port.close();
    });
    return;
  }
  queue = queue.then(async () => {
    try {
      post({ kind: 'result', requestId: request.requestId, value: await handle(request) });
    } catch (error) {
      post({ kind: 'error', requestId: request.requestId, error: wireError(error) });
    }
  });
});
