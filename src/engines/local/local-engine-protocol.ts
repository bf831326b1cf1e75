/**
 * Messages between the local engine's main-thread side and its worker. Only structured-clone
 * data crosses; the abort flag is a SharedArrayBuffer so a running generation sees an abort at the
 * next token without waiting for the worker's event loop.
 */
import type { GenerateEvent, GenerateRequest, PolicyArtifact, PolicyVersion, ScoreRequest, ScoreResult } from '../../spec/inference-engine.js';
import type { ClawrlErrorCode } from '../../spec/clawrl-error.js';

export interface SamplerWorkerData {
  modelDirectory: string;
  backend: 'wasm' | 'cpu';
  /** Name the model is served under (`builtin:tiny`, a folder name, ...). */
  modelId: string;
  /** Fit prompts longer than the window (`model/fit-prompt.ts`) instead of refusing them. */
  fitPrompts: boolean;
  /** Budget of each model's prompt-prefix KV cache, in bytes (0: off). */
  prefixCacheBytes: number;
  /** Continuous batching limits (`model/continuous-batcher.ts`); absent ones take the defaults. */
  batching: LocalBatchingOptions;
  /** LoRA adapters held at once (`--max-resident-adapters`, `served-weights.ts`). */
  maxResidentAdapters: number;
}

export interface LocalBatchingOptions {
  maxRunningSequences?: number;
  kvCacheBytes?: number;
  prefillChunkTokens?: number;
}

export type WorkerRequest =
  | { kind: 'generate'; requestId: number; request: GenerateRequest; abortFlag: Int32Array }
  | { kind: 'score'; requestId: number; request: ScoreRequest }
  /** `stage`: keep the version for requests that name it, and serve the current one to the rest. */
  | { kind: 'load-policy'; requestId: number; artifact: PolicyArtifact; stage?: boolean }
  | { kind: 'pin-policy'; requestId: number; version: PolicyVersion }
  | { kind: 'unpin-policy'; requestId: number; version: PolicyVersion }
  /** The answer to a `fetch-artifact`: the artifact, null when there is no such version, or why it could not be fetched. */
  | { kind: 'artifact'; fetchId: number; artifact: PolicyArtifact | null; error?: WireError }
  | { kind: 'close' };

export interface WireError {
  code: ClawrlErrorCode;
  message: string;
  param?: string;
}

export type WorkerMessage =
  | { kind: 'ready'; contextLength: number; vocabularySize: number }
  | { kind: 'event'; requestId: number; event: GenerateEvent }
  | { kind: 'scored'; requestId: number; result: ScoreResult }
  | { kind: 'done'; requestId: number }
  | { kind: 'error'; requestId: number; error: WireError }
  | { kind: 'fatal'; error: WireError }
  /** The worker needs a version's artifact it was not given (a request names it, or it was evicted). */
  | { kind: 'fetch-artifact'; fetchId: number; version: PolicyVersion };
