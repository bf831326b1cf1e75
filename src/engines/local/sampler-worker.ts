/**
 * The sampler worker: one wasm tensor instance that owns the policy model and its tokenizer.
 * Generations and scorings run together: their sampling joins the model's running batch
 * (`model/continuous-batcher.ts`), whichever policy version each names — the base model and every
 * adapter version share the base weights, each row with its own LoRA (`served-weights.ts`) — and a
 * scoring runs between two of its steps. What changes the active version (a policy load) waits
 * until the requests before it have finished, and what arrives after it waits for it, so a request
 * always finishes on the version it started with and requests keep their arrival order across a
 * swap. A request pinned to a full-weights version other than the active one runs alone.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { fittedReplyRoom, promptWithinWindow } from '../../model/fit-prompt.js';
import { loadTransformerFromFolder, type Transformer } from '../../model/transformer.js';
import { initializeTensorBackend } from '../../tensor/initialize-tensor-backend.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ChatRenderer } from '../../spec/chat-renderer.js';
import type { PolicyArtifact, PolicyVersion } from '../../spec/inference-engine.js';
import { runGeneration } from './run-generation.js';
import { createServedWeights, type ServedWeights } from './served-weights.js';
import type { SamplerWorkerData, WireError, WorkerMessage, WorkerRequest } from './local-engine-protocol.js';

const port = parentPort;
if (port === null) throw new Error('sampler-worker must run in a worker thread');
const data = workerData as SamplerWorkerData;
const modelOptions = { prefixCacheBytes: data.prefixCacheBytes, batching: data.batching };

function post(message: WorkerMessage): void {
  port?.postMessage(message);
}

function wireError(error: unknown): WireError {
  if (ClawrlError.isInstance(error)) return { code: error.code, message: error.message, ...(error.param ? { param: error.param } : {}) };
  return { code: 'internal_error', message: error instanceof Error ? error.message : String(error) };
}

let renderer: ChatRenderer;
let served: ServedWeights;
/** The model's shape and window (the same for every version). */
let shape: Transformer['shape'];

/** Artifact fetches asked of the main thread, by id. */
const fetches = new Map<number, { resolve: (artifact: PolicyArtifact | null) => void; reject: (error: unknown) => void }>();
let nextFetchId = 1;

function fetchArtifact(version: PolicyVersion): Promise<PolicyArtifact | null> {
  const fetchId = nextFetchId++;
  return new Promise((resolve, reject) => {
    fetches.set(fetchId, { resolve, reject });
    post({ kind: 'fetch-artifact', fetchId, version });
  });
}

/** What the worker queues or runs: everything but the main thread's control messages. */
type WorkRequest = Exclude<WorkerRequest, { kind: 'close' | 'artifact' }>;

async function handle(request: WorkRequest): Promise<void> {
  try {
    switch (request.kind) {
      case 'generate':
        await served.onVersion(request.request.policyVersion, (version, { model, adapter }) =>
          runGeneration({
            transformer: model,
            ...(adapter === undefined ? {} : { adapter }),
            renderer,
            policyVersion: version,
            request: request.request,
            abortFlag: request.abortFlag,
            fitPrompts: data.fitPrompts,
            emit: (event) => post({ kind: 'event', requestId: request.requestId, event }),
          }),
        );
        break;
      case 'score': {
        const prompt = request.request.prompt;
        // Scoring fits messages as generation does, so an OPD teacher sees its turn's fitted prompt plus the hint.
        const promptTokenIds =
          'tokenIds' in prompt
            ? prompt.tokenIds
            : data.fitPrompts
              ? promptWithinWindow(renderer, prompt.messages, prompt.tools ?? [], shape.maxPositionEmbeddings, Math.max(fittedReplyRoom(shape.maxPositionEmbeddings), request.request.responseTokenIds.length))
              : renderer.renderPrompt(prompt.messages, prompt.tools ?? []);
        const scored = await served.onVersion(request.request.policyVersion, (_version, { model, adapter }) =>
          model.score({
            ...(adapter === undefined ? {} : { adapter }),
            promptTokenIds,
            continuationTokenIds: request.request.responseTokenIds,
            topLogprobs: request.request.topK ?? 0,
            ...(request.request.temperature === undefined ? {} : { temperature: request.request.temperature }),
          }),
        );
        post({
          kind: 'scored',
          requestId: request.requestId,
          result: {
            promptTokenIds,
            logprobs: scored.logprobs,
            ...(request.request.topK
              ? { top: scored.top.map((row) => row.map((entry) => ({ id: entry.tokenId, text: renderer.tokenText(entry.tokenId), logprob: entry.logprob }))) }
              : {}),
          },
        });
        break;
      }
      case 'load-policy':
        if (request.stage === true) served.stage(request.artifact);
        else await served.loadPolicy(request.artifact);
        break;
      case 'pin-policy':
        await served.pin(request.version);
        break;
      case 'unpin-policy':
        served.unpin(request.version);
        break;
    }
    post({ kind: 'done', requestId: request.requestId });
  } catch (error) {
    post({ kind: 'error', requestId: request.requestId, error: wireError(error) });
  }
}

try {
  await initializeTensorBackend({ backend: data.backend });
  const [base, loadedRenderer] = await Promise.all([loadTransformerFromFolder(data.modelDirectory, modelOptions), loadChatRenderer(data.modelDirectory)]);
  renderer = loadedRenderer;
  shape = base.shape;
  served = createServedWeights({ base, loadOptions: modelOptions, maxResidentAdapters: data.maxResidentAdapters, fetchArtifact });
  post({ kind: 'ready', contextLength: shape.maxPositionEmbeddings, vocabularySize: shape.vocabSize });
} catch (error) {
  post({ kind: 'fatal', error: wireError(error) });
  process.exit(1);
}

/** Shared work on the served weights that is running or queued behind the last exclusive request. */
interface SharedGroup {
  started: boolean;
  waiting: WorkRequest[];
  running: Set<Promise<void>>;
}

let tail: Promise<void> = Promise.resolve();
let openGroup: SharedGroup | null = null;
/** Policy loads queued and not finished: the active version may change under a request that names one. */
let pendingLoads = 0;
let closing = false;

/**
 * Whether a request can run beside others: everything but a policy load and a request pinned to a
 * full-weights version other than the active one. Undefined while the named version's kind is unknown.
 */
function runsShared(request: WorkRequest): boolean | undefined {
  if (request.kind === 'load-policy') return false;
  if (request.kind === 'pin-policy' || request.kind === 'unpin-policy') return true;
  const version = request.request.policyVersion;
  if (version === undefined) return true;
  const exclusive = served.needsExclusive(version);
  if (exclusive === undefined) return undefined;
  // While a load is queued, "the active version" may be about to change: such a request keeps its place in line.
  return !exclusive && !(pendingLoads > 0 && version === served.activeVersion);
}

function startShared(group: SharedGroup, request: WorkRequest): void {
  const running = handle(request).finally(() => group.running.delete(running));
  group.running.add(running);
}

function enqueueShared(request: WorkRequest): void {
  if (openGroup !== null) {
    if (openGroup.started) startShared(openGroup, request);
    else openGroup.waiting.push(request);
    return;
  }
  const group: SharedGroup = { started: false, waiting: [request], running: new Set() };
  openGroup = group;
  tail = tail.then(async () => {
    group.started = true;
    for (const waiting of group.waiting.splice(0)) startShared(group, waiting);
    // Members that join while others run keep the group open; it ends when all have finished.
    while (group.running.size > 0) await Promise.all([...group.running]);
    if (openGroup === group) openGroup = null;
  });
}

function enqueueExclusive(request: WorkRequest): void {
  // Whatever arrives after this request runs after it.
  openGroup = null;
  if (request.kind === 'load-policy') pendingLoads += 1;
  tail = tail.then(async () => {
    try {
      await handle(request);
    } finally {
      if (request.kind === 'load-policy') pendingLoads -= 1;
    }
  });
}

function enqueue(request: WorkRequest): void {
  if (closing) {
    post({ kind: 'error', requestId: request.requestId, error: { code: 'upstream_error', message: 'the local engine is closed' } });
    return;
  }
  const shared = runsShared(request);
  if (shared === true) enqueueShared(request);
  else if (shared === false) enqueueExclusive(request);
  else {
    // A version named for the first time: its kind (adapter or full weights) decides where it runs.
    const version = request.kind === 'generate' || request.kind === 'score' ? request.request.policyVersion : undefined;
    served.learnKind(version ?? 0).then(
      () => enqueue(request),
      (error: unknown) => post({ kind: 'error', requestId: request.requestId, error: wireError(error) }),
    );
  }
}

port.on('message', (request: WorkerRequest) => {
  if (request.kind === 'artifact') {
    const fetch = fetches.get(request.fetchId);
    fetches.delete(request.fetchId);
    if (request.error !== undefined) fetch?.reject(new ClawrlError(request.error.code, request.error.message));
    else fetch?.resolve(request.artifact);
    return;
  }
  if (request.kind === 'close') {
    closing = true;
    openGroup = null;
    void tail.then(() => {
      served.dispose();
      port.close();
    });
    return;
  }
  enqueue(request);
});
