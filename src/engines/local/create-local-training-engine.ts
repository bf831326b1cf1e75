/**
 * The embedded engine's `TrainingEngine`: a trainer worker thread (its own wasm instance, beside
 * the sampler's) owns the trainable model; this side only relays requests. Saved states live in
 * `checkpointDirectory`, one folder per name. Lineages (`TrainingEngine.lineage`) take turns on the
 * one worker, each switch saving one lineage's state there and restoring the other's.
 */
import { mkdirSync } from 'node:fs';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyArtifact } from '../../spec/inference-engine.js';
import type {
  ForwardBackwardInput,
  ForwardBackwardOutput,
  OptimizerStepInput,
  OptimizerStepOutput,
  TrainingEngine,
} from '../../spec/training-engine.js';
import type { LinearModuleName } from '../../model/transformer-parameters.js';
import { withTrainingLineages } from '../training-lineages.js';
import { errorFromWire, startEngineWorker } from './start-engine-worker.js';
import type { TrainerMessage, TrainerRequest, TrainerResult, TrainerWorkerData } from './trainer-worker-protocol.js';

export interface LocalTrainingEngineOptions {
  modelDirectory: string;
  modelId: string;
  checkpointDirectory: string;
  /** Default 'lora'. */
  trainParams?: 'lora' | 'full';
  /** Defaults rank 16, alpha 32, every linear module (as OpenClaw-RL's LoRA runs). */
  lora?: { rank?: number; alpha?: number; targetModules?: LinearModuleName[] };
  /** AdamW; defaults lr 1e-4 (LoRA) or 1e-5 (full), betas (0.9, 0.98), weight decay 0.1, clip 1. */
  optimizer?: { learningRate?: number; beta1?: number; beta2?: number; weightDecay?: number; maxGradientNorm?: number };
  /** Saved states kept; default 3. */
  retainedCheckpoints?: number;
  backend?: 'wasm' | 'cpu';
  /** The compiled worker script; defaults to `trainer-worker.js` beside this module. */
  workerUrl?: URL;
}

type PendingRequest = { resolve: (value: TrainerResult) => void; reject: (error: unknown) => void };
type DistributiveOmit<Type, Key extends PropertyKey> = Type extends unknown ? Omit<Type, Key> : never;


export async function createLocalTrainingEngine(options: LocalTrainingEngineOptions): Promise<TrainingEngine> {
  const trainParams = options.trainParams ?? 'lora';
  const workerData: TrainerWorkerData = {
    modelDirectory: options.modelDirectory,
    modelId: options.modelId,
    backend: options.backend ?? 'wasm',
    trainParams,
    lora: {
      rank: options.lora?.rank ?? 16,
      alpha: options.lora?.alpha ?? 32,
      targetModules: options.lora?.targetModules ?? ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    },
    optimizer: {
      learningRate: options.optimizer?.learningRate ?? (trainParams === 'full' ? 1e-5 : 1e-4),
      beta1: options.optimizer?.beta1 ?? 0.9,
      beta2: options.optimizer?.beta2 ?? 0.98,
      weightDecay: options.optimizer?.weightDecay ?? 0.1,
      maxGradientNorm: options.optimizer?.maxGradientNorm ?? 1,
    },
    checkpointDirectory: options.checkpointDirectory,
    retainedCheckpoints: options.retainedCheckpoints ?? 3,
  };
  mkdirSync(options.checkpointDirectory, { recursive: true });
  const pending = new Map<number, PendingRequest>();
  let nextRequestId = 1;
  let closed = false;

  const onMessage = (message: TrainerMessage) => {
    if (message.kind === 'ready' || message.kind === 'fatal') return;
    const entry = pending.get(message.requestId);
    if (entry === undefined) return;
    pending.delete(message.requestId);
    if (message.kind === 'result') entry.resolve(message.value);
    else entry.reject(errorFromWire(message.error));
  };
  const failAll = (error: ClawrlError) => {
    for (const entry of pending.values()) entry.reject(error);
    pending.clear();
  };
  const { worker } = await startEngineWorker<{ kind: 'ready' }>({
    url: options.workerUrl ?? new URL('./trainer-worker.js', import.meta.url),
    workerData,
    name: 'trainer',
    onFailure: failAll,
    isClosed: () => closed,
  });
  worker.on('message', onMessage);

  function call(request: DistributiveOmit<Exclude<TrainerRequest, { kind: 'close' }>, 'requestId'>): Promise<TrainerResult> {
    if (closed) return Promise.reject(new ClawrlError('internal_error', 'the local training engine is closed'));
    const requestId = nextRequestId++;
    return new Promise((resolve, reject) => {
      pending.set(requestId, { resolve, reject });
      worker.postMessage({ ...request, requestId } as TrainerRequest);
    });
  }

  const engine: TrainingEngine = {
    engineId: 'local',
    info: { trainParams, modelId: options.modelId, learningRate: workerData.optimizer.learningRate },
    capabilities: { losses: ['decoupled_ppo', 'ppo', 'importance_sampling'], referenceLogprobs: true, anchor: true, supportSets: true, proximalLogprobs: true, anyTemperature: true },
    forwardBackward: async (input: ForwardBackwardInput) => (await call({ kind: 'forward-backward', input })) as ForwardBackwardOutput,
    optimizerStep: async (input: OptimizerStepInput = {}) => (await call({ kind: 'optimizer-step', input })) as OptimizerStepOutput,
    publishWeights: async (version) => (await call({ kind: 'publish', version })) as PolicyArtifact,
    saveState: async (name) => (await call({ kind: 'save-state', name })) as string,
    loadState: async (reference) => {
      await call({ kind: 'load-state', reference });
    },
    resetWeights: async (artifact) => {
      await call({ kind: 'reset-weights', artifact });
    },
    async close() {
      if (closed) return;
      closed = true;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ kind: 'close' } satisfies TrainerRequest);
      const timeout = setTimeout(() => void worker.terminate(), 10_000);
      await exited;
      clearTimeout(timeout);
    },
  };
  return withTrainingLineages({ first: engine, capacity: 1 });
}
