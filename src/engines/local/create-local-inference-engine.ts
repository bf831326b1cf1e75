/**
 * The embedded engine's `InferenceEngine`: a sampler worker thread owns the model, so tensor work
 * never runs on the HTTP event loop. This side only relays requests and events.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type {
  EngineHealth,
  GenerateEvent,
  GenerateRequest,
  InferenceEngine,
  PolicyArtifact,
  PolicyArtifactSource,
  PolicyVersion,
  ScoreRequest,
  ScoreResult,
} from '../../spec/inference-engine.js';
import { AsyncEventQueue } from './async-event-queue.js';
import type { LocalBatchingOptions, SamplerWorkerData, WorkerMessage, WorkerRequest } from './local-engine-protocol.js';
import { errorFromWire, startEngineWorker } from './start-engine-worker.js';

export interface LocalInferenceEngineOptions {
  /** A Hugging Face model folder (config.json, safetensors, tokenizer, chat template). */
  modelDirectory: string;
  /** The name clients use. */
  modelId: string;
  /**
   * Fit a prompt longer than the model's window into it (`model/fit-prompt.ts`), for a model whose
   * window cannot hold an agent's prompt; default false: such a prompt is a `context_length_exceeded` error.
   */
  fitPrompts?: boolean;
  /** Budget of the prompt-prefix KV cache (`model/prefix-cache.ts`) of each served version, in bytes; default 256 MiB, 0 turns it off. */
  prefixCacheBytes?: number;
  /** Continuous batching: sequences decoding together (default 16), the KV memory they may reserve (256 MiB), prompt tokens prefilled per step (64). */
  batching?: LocalBatchingOptions;
  /**
   * LoRA adapters held at once, each policy version's requests decoding in one batch with the
   * others' (default `defaultMaxResidentAdapters`, at least 2); a cold one is loaded on demand.
   */
  maxResidentAdapters?: number;
  /** `wasm` (default) or `cpu` (pure JS, for debugging). */
  backend?: 'wasm' | 'cpu';
  /** The compiled worker script; defaults to `sampler-worker.js` beside this module. */
  workerUrl?: URL;
}

/** `--max-resident-adapters`'s default: as many adapters as a full batch of 8 requests names, and the active version. */
export const defaultMaxResidentAdapters = 9;

type Pending =
  | { kind: 'generate'; queue: AsyncEventQueue<GenerateEvent> }
  | { kind: 'score'; resolve: (result: ScoreResult) => void; reject: (error: unknown) => void; result?: ScoreResult }
  | { kind: 'control'; resolve: () => void; reject: (error: unknown) => void };


export async function createLocalInferenceEngine(options: LocalInferenceEngineOptions): Promise<InferenceEngine> {
  const workerData: SamplerWorkerData = { modelDirectory: options.modelDirectory, backend: options.backend ?? 'wasm', modelId: options.modelId, fitPrompts: options.fitPrompts ?? false, prefixCacheBytes: options.prefixCacheBytes ?? 256 * 1024 * 1024, batching: options.batching ?? {}, maxResidentAdapters: options.maxResidentAdapters ?? defaultMaxResidentAdapters };
  let artifactSource: PolicyArtifactSource | null = null;
  const pending = new Map<number, Pending>();
  let nextRequestId = 1;
  let closed = false;
  /** Why the worker stopped serving, once it has (it exited or failed); never cleared. */
  let failure: string | undefined;
  const failAll = (error: ClawrlError) => {
    failure ??= error.message;
    for (const entry of pending.values()) {
      if (entry.kind === 'generate') entry.queue.end(error);
      else entry.reject(error);
    }
    pending.clear();
  };
  const { worker, ready } = await startEngineWorker<{ contextLength: number }>({
    url: options.workerUrl ?? new URL('./sampler-worker.js', import.meta.url),
    workerData,
    name: 'sampler',
    onFailure: failAll,
    isClosed: () => closed,
  });
  /** Answers the worker's request for an artifact it was not given, from the source if there is one. */
  const answerFetch = async (fetchId: number, version: number) => {
    try {
      const artifact = artifactSource === null ? null : await artifactSource(version);
      if (!closed) worker.postMessage({ kind: 'artifact', fetchId, artifact } satisfies WorkerRequest);
    } catch (error) {
      const code = ClawrlError.isInstance(error) ? error.code : 'upstream_error';
      const message = `cannot fetch policy version ${version}: ${error instanceof Error ? error.message : String(error)}`;
      if (!closed) worker.postMessage({ kind: 'artifact', fetchId, artifact: null, error: { code, message } } satisfies WorkerRequest);
    }
  };
  worker.on('message', (message: WorkerMessage) => {
    if (message.kind === 'ready' || message.kind === 'fatal') return;
    if (message.kind === 'fetch-artifact') {
      void answerFetch(message.fetchId, message.version);
      return;
    }
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
        if (entry.kind === 'generate') entry.queue.end(errorFromWire(message.error));
        else entry.reject(errorFromWire(message.error));
        return;
    }
  });

  function send(request: WorkerRequest): void {
    if (closed) throw new ClawrlError('upstream_error', 'the local engine is closed');
    worker.postMessage(request);
  }

  /** Sends a request the worker answers with done or an error. */
  function control(request: (requestId: number) => WorkerRequest): Promise<void> {
    const requestId = nextRequestId++;
    return new Promise((resolve, reject) => {
      pending.set(requestId, { kind: 'control', resolve, reject });
      send(request(requestId));
    });
  }

  return {
    engineId: 'local',
    modelId: options.modelId,
    // Constrained decoding (model/output-constraint.ts) forces tool calls, JSON objects and the JSON schemas it can enforce.
    capabilities: { tokenIds: true, scoring: true, temperatureScoring: true, policyLoading: true, forcedToolChoice: true, responseFormats: ['json_object', 'json_schema'] },
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

    loadPolicy: (artifact: PolicyArtifact) => control((requestId) => ({ kind: 'load-policy', requestId, artifact })),
    stagePolicy: (artifact: PolicyArtifact) => control((requestId) => ({ kind: 'load-policy', requestId, artifact, stage: true })),

    setPolicyArtifactSource(source: PolicyArtifactSource) {
      artifactSource = source;
    },
    pinPolicy: (version: PolicyVersion) => control((requestId) => ({ kind: 'pin-policy', requestId, version })),
    unpinPolicy: (version: PolicyVersion) => control((requestId) => ({ kind: 'unpin-policy', requestId, version })),

    async checkHealth(): Promise<EngineHealth> {
      if (closed) return { ok: false, reason: 'the local engine is closed' };
      // Loaded and its worker running: it serves, however long the queue.
      return failure === undefined ? { ok: true } : { ok: false, reason: failure };
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
