/**
 * The sampler worker: one wasm tensor instance that owns the policy model and its tokenizer.
 * Requests run one at a time in arrival order, so a new policy version is swapped in between
 * requests and a request always finishes on the version it started with.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { loadTransformerFromFolder, type Transformer } from '../../model/transformer.js';
import { initializeTensorBackend } from '../../tensor/initialize-tensor-backend.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ChatRenderer } from '../../spec/chat-renderer.js';
import type { PolicyArtifact } from '../../spec/inference-engine.js';
import { runGeneration } from './run-generation.js';
import type { SamplerWorkerData, WireError, WorkerMessage, WorkerRequest } from './local-engine-protocol.js';

const port = parentPort;
if (port === null) throw new Error('sampler-worker must run in a worker thread');
const data = workerData as SamplerWorkerData;

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
/** Adapters of the versions that can still be served (pinned sessions), newest last. */
const adapters = new Map<number, Record<string, Uint8Array>>();
const retainedVersions = 8;

async function loadPolicy(artifact: PolicyArtifact): Promise<void> {
  if (artifact.kind === 'full') {
    throw new ClawrlError('unsupported', 'the local sampler loads LoRA adapters; full-weight versions are not supported yet');
  }
  const files = artifact.kind === 'adapter' ? artifact.files : adapters.get(0);
  if (files === undefined) throw new ClawrlError('internal_error', 'the base adapter is missing');
  transformer.importAdapter(files);
  adapters.delete(artifact.version);
  adapters.set(artifact.version, files);
  for (const version of adapters.keys()) {
    if (adapters.size <= retainedVersions) break;
    if (version !== 0 && version !== artifact.version) adapters.delete(version);
  }
  policyVersion = artifact.version;
}

/** Runs `work` on an older version for a pinned request, then restores the active one. */
async function onVersion<Result>(version: number | undefined, work: (version: number) => Promise<Result>): Promise<Result> {
  if (version === undefined || version === policyVersion) return work(policyVersion);
  const files = adapters.get(version);
  if (files === undefined) throw new ClawrlError('not_found', `policy version ${version} is not loaded in the local engine`);
  const active = adapters.get(policyVersion);
  transformer.importAdapter(files);
  try {
    return await work(version);
  } finally {
    if (active !== undefined) transformer.importAdapter(active);
  }
}

async function handle(request: Exclude<WorkerRequest, { kind: 'close' }>): Promise<void> {
  try {
    switch (request.kind) {
      case 'generate':
        await onVersion(request.request.policyVersion, (version) =>
          runGeneration({
            transformer,
            renderer,
            policyVersion: version,
            request: request.request,
            abortFlag: request.abortFlag,
            emit: (event) => post({ kind: 'event', requestId: request.requestId, event }),
          }),
        );
        break;
      case 'score': {
        const prompt = request.request.prompt;
        const promptTokenIds = 'tokenIds' in prompt ? prompt.tokenIds : renderer.renderPrompt(prompt.messages, prompt.tools ?? []);
        const scored = await onVersion(request.request.policyVersion, () =>
          transformer.score({
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
        await loadPolicy(request.artifact);
        break;
    }
    post({ kind: 'done', requestId: request.requestId });
  } catch (error) {
    post({ kind: 'error', requestId: request.requestId, error: wireError(error) });
  }
}

try {
  await initializeTensorBackend({ backend: data.backend });
  [transformer, renderer] = await Promise.all([loadTransformerFromFolder(data.modelDirectory), loadChatRenderer(data.modelDirectory)]);
  if (transformer.adapter !== null) adapters.set(0, await transformer.exportAdapter({ baseModelNameOrPath: data.modelId }));
  post({ kind: 'ready', contextLength: transformer.shape.maxPositionEmbeddings, vocabularySize: transformer.shape.vocabSize });
} catch (error) {
  post({ kind: 'fatal', error: wireError(error) });
  process.exit(1);
}

// Requests run strictly one after another; the chain keeps their order.
let queue: Promise<void> = Promise.resolve();
port.on('message', (request: WorkerRequest) => {
  if (request.kind === 'close') {
    void queue.then(() => {
      transformer.dispose();
      port.close();
    });
    return;
  }
  queue = queue.then(() => handle(request));
});
