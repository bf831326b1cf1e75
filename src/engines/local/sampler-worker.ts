/**
 * The sampler worker: one wasm tensor instance that owns the policy model and its tokenizer.
 * Generations and scorings on the served weights run together: their sampling joins the model's
 * running batch (`model/continuous-batcher.ts`) and a scoring runs between two of its steps. What
 * changes the weights (a new policy version, a request pinned to an older one) waits until they
 * have finished, and what arrives after it waits for it, so a request always finishes on the
 * version it started with and requests keep their arrival order across a swap.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { fittedReplyRoom, promptWithinWindow } from '../../model/fit-prompt.js';
import { readSafetensors } from '../../model/safetensors.js';
import { loadTransformer, loadTransformerFromFolder, type AdapterView, type Transformer } from '../../model/transformer.js';
import { initializeTensorBackend } from '../../tensor/initialize-tensor-backend.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ChatRenderer } from '../../spec/chat-renderer.js';
import type { PolicyArtifact } from '../../spec/inference-engine.js';
import { runGeneration } from './run-generation.js';
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

let transformer: Transformer;
let renderer: ChatRenderer;
let policyVersion = 0;
/** Artifacts of the versions that can still be served (pinned sessions), newest last. */
const versions = new Map<number, PolicyArtifact>();
const retainedVersions = 8;
/** The full-weights version the transformer holds; 0 when it holds the base weights. */
let weightsVersion = 0;

/** Puts `artifact`'s weights in place: full weights replace the model, adapters go on the base weights. */
async function applyWeights(artifact: PolicyArtifact): Promise<void> {
  if (artifact.kind === 'full') {
    if (weightsVersion === artifact.version) return;
    const bytes = artifact.files['model.safetensors'];
    if (bytes === undefined) throw new ClawrlError('invalid_request', 'a full-weights policy needs model.safetensors');
    replaceTransformer(loadTransformer({ ...modelOptions, shape: transformer.shape, weights: readSafetensors(bytes).tensors }));
    weightsVersion = artifact.version;
    return;
  }
  if (weightsVersion !== 0) {
    replaceTransformer(await loadTransformerFromFolder(data.modelDirectory, modelOptions));
    weightsVersion = 0;
  }
  const files = artifact.kind === 'adapter' ? artifact.files : versions.get(0)?.files;
  if (files === undefined) throw new ClawrlError('internal_error', 'the base adapter is missing');
  transformer.importAdapter(files);
}

async function loadPolicy(artifact: PolicyArtifact): Promise<void> {
  await applyWeights(artifact);
  if (artifact.version !== 0) {
    versions.delete(artifact.version);
    versions.set(artifact.version, artifact);
  }
  for (const version of versions.keys()) {
    if (versions.size <= retainedVersions) break;
    if (version !== 0 && version !== artifact.version) versions.delete(version);
  }
  policyVersion = artifact.version;
}

/**
 * Keeps a version a request may name (the gate's and the canary's candidate) without serving it:
 * a request for it puts its weights in place for that request alone (`onVersion`).
 */
function stagePolicy(artifact: PolicyArtifact): void {
  if (artifact.version === 0 || artifact.version === policyVersion) return;
  versions.delete(artifact.version);
  versions.set(artifact.version, artifact);
}

/**
 * The base weights beside trained full weights, loaded on the first request for version 0 (a
 * frozen judge asks for it on every judgement, so swapping whole models back and forth per request
 * would cost two loads each time).
 */
let baseTransformer: Promise<Transformer> | null = null;
/**
 * The base adapter beside a trained one on the same weights, for the same frozen judge: serving it
 * from its own view keeps the served adapter (and its prefix cache) in place and lets the judge's
 * votes run beside the served version's batch.
 */
let baseView: AdapterView | null = null;

function replaceTransformer(next: Transformer): void {
  baseView?.dispose();
  baseView = null;
  transformer.dispose();
  transformer = next;
}

/** What a request samples or scores with. */
type ServingModel = Pick<Transformer, 'shape' | 'sample' | 'score'>;

/** Runs `work` on an older version for a pinned request, then restores the active one. */
async function onVersion<Result>(version: number | undefined, work: (version: number, model: ServingModel) => Promise<Result>): Promise<Result> {
  if (version === undefined || version === policyVersion) return work(policyVersion, transformer);
  if (version === 0 && weightsVersion !== 0) {
    baseTransformer ??= loadTransformerFromFolder(data.modelDirectory, modelOptions);
    return work(0, await baseTransformer);
  }
  const baseFiles = versions.get(0)?.files;
  if (version === 0 && transformer.adapter !== null && baseFiles !== undefined) {
    baseView ??= transformer.createAdapterView(baseFiles);
    return work(0, baseView);
  }
  const pinned = versions.get(version);
  if (pinned === undefined) throw new ClawrlError('not_found', `policy version ${version} is not loaded in the local engine`);
  const active = versions.get(policyVersion);
  await applyWeights(pinned);
  try {
    return await work(version, transformer);
  } finally {
    if (active !== undefined) await applyWeights(active);
  }
}

async function handle(request: Exclude<WorkerRequest, { kind: 'close' }>): Promise<void> {
  try {
    switch (request.kind) {
      case 'generate':
        await onVersion(request.request.policyVersion, (version, model) =>
          runGeneration({
            transformer: model,
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
              ? promptWithinWindow(renderer, prompt.messages, prompt.tools ?? [], transformer.shape.maxPositionEmbeddings, Math.max(fittedReplyRoom(transformer.shape.maxPositionEmbeddings), request.request.responseTokenIds.length))
              : renderer.renderPrompt(prompt.messages, prompt.tools ?? []);
        const scored = await onVersion(request.request.policyVersion, (_version, model) =>
          model.score({
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
        if (request.stage === true) stagePolicy(request.artifact);
        else await loadPolicy(request.artifact);
        break;
    }
    post({ kind: 'done', requestId: request.requestId });
  } catch (error) {
    post({ kind: 'error', requestId: request.requestId, error: wireError(error) });
  }
}

try {
  await initializeTensorBackend({ backend: data.backend });
  [transformer, renderer] = await Promise.all([loadTransformerFromFolder(data.modelDirectory, modelOptions), loadChatRenderer(data.modelDirectory)]);
  if (transformer.adapter !== null) versions.set(0, { version: 0, kind: 'adapter', files: await transformer.exportAdapter({ baseModelNameOrPath: data.modelId }) });
  post({ kind: 'ready', contextLength: transformer.shape.maxPositionEmbeddings, vocabularySize: transformer.shape.vocabSize });
} catch (error) {
  post({ kind: 'fatal', error: wireError(error) });
  process.exit(1);
}

/** Shared work on the served weights that is running or queued behind the last exclusive request. */
interface SharedGroup {
  started: boolean;
  waiting: WorkerRequest[];
  running: Set<Promise<void>>;
}

let tail: Promise<void> = Promise.resolve();
let openGroup: SharedGroup | null = null;
/** Policy loads queued and not finished: the served version may change under a request that names one. */
let pendingLoads = 0;

/** Whether a request can run beside others: it reads the served weights (or the base model kept beside them) and changes nothing. */
function runsShared(request: Exclude<WorkerRequest, { kind: 'close' }>): boolean {
  if (request.kind === 'load-policy') return false;
  const version = request.request.policyVersion;
  if (version === undefined) return true;
  // Version 0 beside another served version: the base model kept beside full weights, or the base adapter's view.
  return pendingLoads === 0 && (version === policyVersion || (version === 0 && (weightsVersion !== 0 || (transformer.adapter !== null && versions.has(0)))));
}

function startShared(group: SharedGroup, request: WorkerRequest): void {
  if (request.kind === 'close') return;
  const running = handle(request).finally(() => group.running.delete(running));
  group.running.add(running);
}

function enqueueShared(request: Exclude<WorkerRequest, { kind: 'close' }>): void {
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

function enqueueExclusive(request: Exclude<WorkerRequest, { kind: 'close' }>): void {
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

port.on('message', (request: WorkerRequest) => {
  if (request.kind === 'close') {
    openGroup = null;
    void tail.then(async () => {
      baseView?.dispose();
      transformer.dispose();
      (await baseTransformer)?.dispose();
      port.close();
    });
    return;
  }
  if (runsShared(request)) enqueueShared(request);
  else enqueueExclusive(request);
});
