/**
 * Messages between the local training engine's main-thread side and its trainer worker. Only
 * structured-clone data crosses. Requests run one at a time in arrival order.
 */
import type { PolicyArtifact, PolicyVersion } from '../../spec/inference-engine.js';
import type { ForwardBackwardInput, ForwardBackwardOutput, OptimizerStepInput, OptimizerStepOutput } from '../../spec/training-engine.js';
import type { LinearModuleName } from '../../model/transformer-parameters.js';
import type { WireError } from './local-engine-protocol.js';

export interface TrainerWorkerData {
  modelDirectory: string;
  /** Written into published adapters as `base_model_name_or_path`. */
  modelId: string;
  backend: 'wasm' | 'cpu';
  trainParams: 'lora' | 'full';
  lora: { rank: number; alpha: number; targetModules: LinearModuleName[] };
  optimizer: { learningRate: number; beta1: number; beta2: number; weightDecay: number; maxGradientNorm: number };
  /** Where `saveState` writes; one sub-folder per saved name. */
  checkpointDirectory: string;
  /** Saved states kept; older ones are deleted after each save. */
  retainedCheckpoints: number;
}

export type TrainerRequest =
  | { kind: 'forward-backward'; requestId: number; input: ForwardBackwardInput }
  | { kind: 'optimizer-step'; requestId: number; input: OptimizerStepInput }
  | { kind: 'publish'; requestId: number; version: PolicyVersion }
  | { kind: 'save-state'; requestId: number; name: string }
  | { kind: 'load-state'; requestId: number; reference: string }
  | { kind: 'reset-weights'; requestId: number; artifact: PolicyArtifact }
  | { kind: 'close' };

export type TrainerResult = ForwardBackwardOutput | OptimizerStepOutput | PolicyArtifact | string | null;

export type TrainerMessage =
  | { kind: 'ready' }
  | { kind: 'result'; requestId: number; value: TrainerResult }
  | { kind: 'error'; requestId: number; error: WireError }
  | { kind: 'fatal'; error: WireError };
