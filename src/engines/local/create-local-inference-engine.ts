/**
 * The embedded engine's `InferenceEngine`: a sampler worker thread owns the model, so tensor work
 * never runs on the HTTP event loop. This side only relays requests and events.
 */
import { Worker } from 'node:worker_threads';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type {
  GenerateEvent,
  GenerateRequest,
  InferenceEngine,
  PolicyArtifact,
  ScoreRequest,
  ScoreResult,
} from '../../spec/inference-engine.js';
import { AsyncEventQueue } from './async-event-queue.js';
import type { SamplerWorkerData, WireError, WorkerMessage, WorkerRequest } from './local-engine-protocol.js';

export interface LocalInferenceEngineOptions {
  /** A Hugging Face model folder (config.json, safetensors, tokenizer, chat template). */
  modelDirectory: string;
  /** The name clients use. */
  modelId: string;
  /** `wasm` (default) or `cpu` (pure JS, for debugging). */
  backend?: 'wasm' | 'cpu';
  /** The compiled worker script; defaults to `sampler-worker.js` beside this module. */
  workerUrl?: URL;
}

type Pending =
  | { kind: 'generate'; queue: AsyncEventQueue<GenerateEvent> }
  | { kind: 'score'; resolve: (result: ScoreResult) => void; reject: (error: unknown) => void; result?: ScoreResult }
  | { kind: 'load-policy'; resolve: () => void; reject: (error: unknown) => void };

function toError(error: WireError): ClawrlError {
  return new ClawrlError(error.code, error.message, error.param === undefined ? {} : { param: error.param });
}

export async function createLocalInferenceEngine(options: LocalInferenceEngineOptions): Promise<InferenceEngine> {
  const workerData: SamplerWorkerData = { modelDirectory: options.modelDirectory, backend: options.backend ?? 'wasm', modelId: options.modelId };
  const worker = new Worker(options.workerUrl ?? new URL('./sampler-worker.js', import.meta.url), { workerData });
  const pending = new Map<number, Pending>();
  let nextRequestId = 1;
  let closed = false;

  // Removing only our own listeners matters: Worker keeps internal ones that wire up its port.
  let onLoadMessage: ((message: WorkerMessage) => void) | undefined;
  let onLoadError: ((error: Error) => void) | undefined;
  let onLoadExit: ((code: number) => void) | undefined;
  const ready = await new Promise<{ contextLength: number }>((resolve, reject) => {
    onLoadMessage = (message) => {
      if (message.kind === 'ready') resolve(message);
      else if (message.kind === 'fatal') reject(toError(message.error));
    };
    onLoadError = reject;
    onLoadExit = (code) => reject(new ClawrlError('internal_error', `the sampler worker exited with code ${code} while loading`));
    worker.on('message', onLoadMessage);
    worker.once('error', onLoadError);
    worker.once('exit', onLoadExit);
  }).finally(() => {
    if (onLoadMessage) worker.off('message', onLoadMessage);
    if (onLoadError) worker.off('error', onLoadError);
    if (onLoadExit) worker.off('exit', onLoadExit);
  });

  const failAll = (error: ClawrlError) => {
    for (const entry of pending.values()) {
      if (entry.kind === 'generate') entry.queue.end(error);
      else entry.reject(error);
    }
    pending.clear();
  };
  worker.on('error', (error) => failAll(new ClawrlError('internal_error', `the sampler worker failed: ${error.message}`, { cause: error })));
  worker.on('exit', (code) => {
    if (!closed) failAll(new ClawrlError('internal_error', `the sampler worker exited with code ${code}`));
  });
  worker.on('message', (message: WorkerMessage) => {
    if (message.kind === 'ready' || message.kind === 'fatal') return;
    const entry = pending.get(message.requestId);
    if (entry === undefined) return;
    switch (message.kind) {
      case 'event':
        if (entry.kind === 'generate') entry.queue.push(message.event);
        return;
      case 'scored':
        if (entry.kind === 'score') entry.result = message.result;
        return;
      case 'done':
        pending.delete(message.requestId);
        if (entry.kind === 'generate') entry.queue.end();
        else if (entry.kind === 'score') entry.result === undefined ? entry.reject(new ClawrlError('internal_error', 'no score')) : entry.resolve(entry.result);
        else entry.resolve();
        return;
      case 'error':
        pending.delete(message.requestId);
        if (entry.kind === 'generate') entry.queue.end(toError(message.error));
        else entry.reject(toError(message.error));
        return;
    }
  });

  function send(request: WorkerRequest): void {
    if (closed) throw new ClawrlError('upstream_error', 'the local engine is closed');
    worker.postMessage(request);
  }

  return {
    engineId: 'local',
    modelId: options.modelId,
    capabilities: { tokenIds: true, scoring: true, policyLoading: true },
    contextLength: ready.contextLength,

    async *generate(request: GenerateRequest, signal: AbortSignal): AsyncIterable<GenerateEvent> {
      const requestId = nextRequestId++;
      const abortFlag = new Int32Array(new SharedArrayBuffer(4));
      const queue = new AsyncEventQueue<GenerateEvent>();
      pending.set(requestId, { kind: 'generate', queue });
      const onAbort = () => Atomics.store(abortFlag, 0, 1);
      signal.addEventListener('abort', onAbort, { once: true });
      send({ kind: 'generate', requestId, request, abortFlag });
      try {
        for (let next = await queue.next(); next.done !== true; next = await queue.next()) yield next.value;
      } finally {
        // A consumer that stops early (client gone) stops the worker at the next token.
        Atomics.store(abortFlag, 0, 1);
        signal.removeEventListener('abort', onAbort);
      }
    },

    score(request: ScoreRequest): Promise<ScoreResult> {
      const requestId = nextRequestId++;
      return new Promise((resolve, reject) => {
        pending.set(requestId, { kind: 'score', resolve, reject });
        send({ kind: 'score', requestId, request });
      });
    },

    loadPolicy(artifact: PolicyArtifact): Promise<void> {
      const requestId = nextRequestId++;
      return new Promise((resolve, reject) => {
        pending.set(requestId, { kind: 'load-policy', resolve, reject });
        send({ kind: 'load-policy', requestId, artifact });
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ kind: 'close' } satisfies WorkerRequest);
      const timeout = setTimeout(() => void worker.terminate(), 10_000);
      await exited;
      clearTimeout(timeout);
    },
  };
}
