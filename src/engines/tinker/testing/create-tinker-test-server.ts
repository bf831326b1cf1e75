/**
 * A Tinker-protocol server for tests, built from the published protocol (`engines.md` §5, SkyRL's
 * `skyrl/tinker/api.py`): the JSON endpoints, futures polled through `retrieve_future` (held up to
 * `holdMs`, then 408), failed requests as `{error, category}`, HTTP errors as FastAPI's `{detail}`,
 * `X-API-Key`, per-model `seq_id`s that must increase (a resubmission with the same
 * `X-Idempotency-Key` gets the first result), and `load_weights` only as a model's first request. The losses are computed for real: each training client is a local training engine on a tiny
 * model. A Tinker datum (input = full[:-1], targets = full[1:]) becomes a local datum whose prompt
 * is the first token and whose response is every target, with mask 1 and `batchLossTokens` 1, so
 * the local engine's "sum over loss tokens / batchLossTokens" is Tinker's plain sum. Tinker's
 * `ppo` thresholds (1 − ε_lo, 1 + ε_hi) map back onto the local `ppo` loss's ε. Sampling (`create_sampling_session`, `asample`) runs on a transformer in this process: the base
 * model, or the adapter a `save_weights_for_sampler` saved, with the local sampler's log-probs,
 * `prompt_logprobs` from a score of the whole prompt (the first entry null, as Tinker's).
 *
 * It stands for one `flavour` of server and refuses what that one refuses
 * (`tinker-test-server-access.ts`): `hosted` has the token exchange, only `forward_backward` (no
 * `/api/v1/forward`, as SDK 0.25 speaks to it), the SDK's archive route to a signed URL, a plain tar,
 * failed requests as `{error, category}`, `seq_id`s without gaps, and the request limits it
 * announces in `client/config` (checked on the JSON body); `skyrl` has `/api/v1/forward`, the bare
 * archive route to a `.tar.gz`, failed requests as HTTP 400, `skyrl.ai/grad_norm`, no `loss:sum`,
 * and applies only the learning rate of `optim_step`, as SkyRL's FSDP backend.
 *
 * `inject` makes the next matching requests meet a fault, so clients can be tested against 408s,
 * `try_again`, expired futures (410), 5xx, 503/425 on the archive route (`path: 'archive'`), bare
 * 400s, polls that hang, dropped connections and user errors.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLocalTrainingEngine } from '../../local/create-local-training-engine.js';
import type { TrainingEngine } from '../../../spec/training-engine.js';
import { requestSchemas, tinkerPathOf } from '../tinker-api.js';
import { createArchiveRoutes, createJwtIssuer, type TinkerServerFlavour } from './tinker-test-server-access.js';
import { createTinkerTestSampler, runForwardBackward, UserError, type ForwardBackwardInput } from './tinker-test-server-work.js';

export type TinkerFaultKind = 'http-500' | 'http-503' | 'http-425' | 'bare-400' | 'hang' | 'drop' | '408' | 'try-again' | 'expire' | 'user-error';

export interface TinkerTestServerOptions {
  /** The tiny model folder every training client trains. */
  modelDirectory: string;
  /** The one base model the server trains, by name. */
  baseModel: string;
  /** When set, requests without this `X-API-Key` get 401 (hosted; SkyRL checks no key). */
  apiKey?: string;
  /** The compiled trainer worker (`dist/engines/local/trainer-worker.js`). */
  workerUrl: URL;
  /** LoRA alpha of every client; default 32, as SkyRL. */
  loraAlpha?: number;
  /** The only AdamW settings `optim_step` accepts besides the learning rate (the local engine fixes them at start). */
  adam?: { beta1: number; beta2: number; eps: number; weight_decay: number; grad_clip_norm: number };
  /** How long `retrieve_future` holds a pending future before answering 408; default 100 ms. */
  holdMs?: number;
  /** Default `hosted`. */
  flavour?: TinkerServerFlavour;
  /** Whether `client/config` turns the token exchange on; default true when hosted. */
  tokenExchange?: boolean;
  /** Default 3600. */
  jwtLifetimeSeconds?: number;
  /** How the hosted archive route answers: a 302 (default) or a 200 `{url, expires}`. */
  archiveAnswer?: 'redirect' | 'json';
  /** Limits announced in `client/config` and enforced on `forward_backward` (hosted). */
  chunkLimits?: { datums: number; bytes: number };
}

export interface TinkerTestServer {
  url: string;
  /** The next `times` requests to `path` (a `/api/v1/` name) meet `kind`. */
  inject(fault: { path: string; kind: TinkerFaultKind; times?: number }): void;
  /** Model-scoped requests as they arrived: path, model and seq_id. */
  readonly received: { path: string; modelId: string; seqId: number | null }[];
  readonly heartbeats: () => number;
  /** JWTs issued by `auth/token`. */
  readonly tokenExchanges: () => number;
  /** Advantages of each `forward_backward` datum as received, per request. */
  readonly forwardBackwardAdvantages: number[][][];
  /** Training clients not unloaded. */
  readonly liveModels: () => number;
  close(): Promise<void>;
}

type FutureState = { state: 'pending' } | { state: 'done'; result: unknown } | { state: 'failed'; error: string; category: 'user' | 'server' };


const defaultAdam = { beta1: 0.9, beta2: 0.98, eps: 1e-8, weight_decay: 0.1, grad_clip_norm: 1 };

export async function createTinkerTestServer(options: TinkerTestServerOptions): Promise<TinkerTestServer> {
  const adam = options.adam ?? defaultAdam;
  const holdMs = options.holdMs ?? 100;
  const flavour = options.flavour ?? 'hosted';
  const hosted = flavour === 'hosted';
  const tokenExchange = options.tokenExchange ?? hosted;
  const jwts = createJwtIssuer(options.jwtLifetimeSeconds ?? 3600);
  const forwardBackwardAdvantages: number[][][] = [];
  const archives = createArchiveRoutes({ flavour, answer: options.archiveAnswer ?? 'redirect', baseUrl: () => url, checkpointOf: (modelId, checkpoint) => saved.get(tinkerPathOf(modelId, 'sampler_weights', checkpoint)) });
  const checkpoints = mkdtempSync(path.join(tmpdir(), 'clawrl-tinker-server-'));
  const futures = new Map<string, { state: FutureState; done: Promise<void>; expired: boolean }>();
  const faults: { path: string; kind: TinkerFaultKind; times: number }[] = [];
  const received: TinkerTestServer['received'] = [];
  const models = new Map<string, { engine: Promise<TrainingEngine>; sdkVersion: string; trainUnembed: boolean; lastSeqId: number; requests: number; queue: Promise<unknown>; byKey: Map<string, string> }>();
  /** Saved weights by tinker path: the local state name, the adapter files of a weights-only load, and whether the unembedding was trained. */
  const saved = new Map<string, { stateName: string | null; files: Record<string, Uint8Array>; trainUnembed: boolean }>();
  let nextId = 1;
  /** The SDK version each session claimed. */
  const sessionVersions = new Map<string, string>();
  let heartbeats = 0;
  const samplingSessions = new Map<string, { files: Record<string, Uint8Array> | null; lastSeqId: number }>();
  const sampler = createTinkerTestSampler(options.modelDirectory, options.baseModel);
  let samplerQueue: Promise<unknown> = Promise.resolve();

  const takeFault = (name: string): TinkerFaultKind | null => {
    const fault = faults.find((entry) => entry.path === name && entry.times > 0);
    if (fault === undefined) return null;
    fault.times -= 1;
    return fault.kind;
  };

  function startFuture(work: () => Promise<unknown>): string {
    const id = String(nextId++);
    const entry = { state: { state: 'pending' } as FutureState, done: Promise.resolve(), expired: false };
    entry.done = work().then(
      (result) => void (entry.state = { state: 'done', result }),
      (error: unknown) => void (entry.state = { state: 'failed', error: error instanceof Error ? error.message : String(error), category: error instanceof UserError ? 'user' : 'server' }),
    );
    futures.set(id, entry);
    return id;
  }

  function forwardBackward(engine: TrainingEngine, input: ForwardBackwardInput, forwardOnly: boolean) {
    if (!forwardOnly) forwardBackwardAdvantages.push(input.data.map((datum) => datum.loss_fn_inputs.advantages?.data ?? []));
    // SkyRL's FSDP backend reports no `loss:sum`.
    return runForwardBackward(engine, input, forwardOnly, hosted);
  }

  async function runModelRequest(name: string, modelId: string, body: Record<string, unknown>, engine: TrainingEngine, first: boolean, trainUnembed: boolean): Promise<unknown> {
    switch (name) {
      case 'forward':
        return forwardBackward(engine, requestSchemas.forward.parse(body).forward_input, true);
      case 'forward_backward':
        return forwardBackward(engine, requestSchemas.forward_backward.parse(body).forward_backward_input, false);
      case 'optim_step': {
        const params = requestSchemas.optim_step.parse(body).adam_params;
        // SkyRL's FSDP backend applies only the learning rate; the rest is fixed at its start.
        for (const key of ['beta1', 'beta2', 'eps', 'weight_decay', 'grad_clip_norm'] as const) {
          if (hosted && Math.abs(params[key] - adam[key]) > 1e-12 * Math.max(1, Math.abs(adam[key]))) throw new UserError(`this server trains with ${key} ${adam[key]}, not ${params[key]}`);
        }
        const step = await engine.optimizerStep({ learningRate: params.learning_rate });
        return { metrics: { [hosted ? 'grad_norm' : 'skyrl.ai/grad_norm']: step.gradientNorm, learning_rate: step.learningRate } };
      }
      case 'save_weights_for_sampler':
      case 'save_weights': {
        const checkpoint = requestSchemas[name].parse(body).path;
        const kind = name === 'save_weights' ? 'weights' : 'sampler_weights';
        const target = tinkerPathOf(modelId, kind, checkpoint);
        const files = (await engine.publishWeights(0)).files;
        const stateName = kind === 'weights' ? await engine.saveState(`${modelId}__${checkpoint}`) : null;
        saved.set(target, { stateName, files, trainUnembed });
        return { path: target, type: name };
      }
      case 'load_weights': {
        const request = requestSchemas.load_weights.parse(body);
        if (!first) throw new UserError('load_weights must be the first request after create_model');
        const checkpoint = saved.get(request.path);
        if (checkpoint === undefined || checkpoint.stateName === null) throw new UserError(`Checkpoint not found: ${request.path}`);
        if (request.optimizer) await engine.loadState(checkpoint.stateName);
        else await engine.resetWeights({ version: 0, kind: 'adapter', files: checkpoint.files });
        return { path: request.path, type: 'load_weights' };
      }
      default:
        throw new UserError(`unknown request ${name}`);
    }
  }

  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body));
  };

  /** Whether the request's `X-API-Key` opens `name`: the key for the config and the exchange, else a JWT where the exchange is on; SkyRL checks none. */
  function admitted(name: string, key: string | undefined): boolean {
    if (!hosted) return true;
    if (name === 'client/config' || name === 'auth/token' || !tokenExchange) return options.apiKey === undefined || key === options.apiKey;
    return jwts.accepts(key);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestPath = request.url ?? '';
    if (requestPath.startsWith('/storage/')) return archives.serveSigned(request, response);
    const name = requestPath.replace(/^\/api\/v1\//, '');
    const credential = typeof request.headers['x-api-key'] === 'string' ? request.headers['x-api-key'] : undefined;
    if (!admitted(name, credential)) return send(response, 401, { detail: tokenExchange && name !== 'client/config' && name !== 'auth/token' ? 'Invalid JWT' : 'Invalid API key' });
    const isArchive = request.method === 'GET' && name.startsWith('training_runs/');
    const fault = takeFault(isArchive ? 'archive' : name);
    if (fault === 'drop') return void request.socket.destroy();
    if (fault === 'hang') return;
    if (fault === 'http-500') return send(response, 500, { detail: 'Internal Server Error' });
    if (fault === 'bare-400') return send(response, 400, { detail: 'Bad Request' });
    if (request.method === 'GET' && name === 'get_server_capabilities') return send(response, 200, { supported_models: [{ model_name: options.baseModel }], supported_loss_fns: ['importance_sampling', 'ppo'] });
    if (request.method === 'GET' && name === 'healthz') return send(response, 200, { status: 'ok' });
    if (isArchive) {
      if (fault === 'http-503' || fault === 'http-425') return send(response, fault === 'http-503' ? 503 : 425, { detail: fault === 'http-503' ? 'Service Unavailable' : 'Checkpoint is still being created' });
      return archives.answer(response, name);
    }
    if (request.method !== 'POST') return send(response, 404, { detail: 'Not Found' });
    let body: Record<string, unknown>;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return send(response, 422, { detail: 'the body is not JSON' });
    }
    const schema = requestSchemas[name as keyof typeof requestSchemas];
    // The hosted service speaks forward-only passes through forward_backward since SDK 0.25.
    if (schema === undefined || (hosted && name === 'forward')) return send(response, 404, { detail: 'Not Found' });
    const checked = schema.safeParse(body);
    if (!checked.success) return send(response, 422, { detail: checked.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ') });

    if (name === 'client/config') {
      const limits = hosted && options.chunkLimits !== undefined ? { fwdbwd_max_chunk_len: options.chunkLimits.datums, fwdbwd_max_chunk_bytes_count: options.chunkLimits.bytes } : {};
      return send(response, 200, { pjwt_auth_enabled: tokenExchange, ...limits });
    }
    if (name === 'auth/token') {
      if (!tokenExchange) return send(response, 404, { detail: 'Not Found' });
      return send(response, 200, { jwt: jwts.issue() });
    }
    if (name === 'forward_backward' && hosted && options.chunkLimits !== undefined) {
      const { datums, bytes } = options.chunkLimits;
      const count = requestSchemas.forward_backward.parse(body).forward_backward_input.data.length;
      const size = Buffer.byteLength(JSON.stringify(body));
      if (count > datums || size > bytes) return send(response, 413, { detail: `a forward_backward of ${count} datums and ${size} bytes is over this server's limits (${datums} datums, ${bytes} bytes)` });
    }
    if (name === 'create_session') {
      const sessionId = `session-${nextId++}`;
      sessionVersions.set(sessionId, requestSchemas.create_session.parse(body).sdk_version ?? '');
      return send(response, 200, { session_id: sessionId, info_message: null, warning_message: null, error_message: null });
    }
    if (name === 'session_heartbeat') {
      heartbeats += 1;
      return send(response, 200, { type: 'session_heartbeat' });
    }
    if (name === 'retrieve_future') {
      const requestId = requestSchemas.retrieve_future.parse(body).request_id;
      const future = futures.get(requestId);
      if (future === undefined) return send(response, 404, { detail: 'Future not found' });
      if (fault === 'expire') future.expired = true;
      if (future.expired) return send(response, 410, { detail: 'Promise expired' });
      if (fault === '408') return send(response, 408, { detail: 'Timeout waiting for result' });
      if (fault === 'try-again') return send(response, 200, { type: 'try_again', request_id: requestId, queue_state: 'active' });
      await Promise.race([future.done, new Promise((resolve) => setTimeout(resolve, holdMs))]);
      const state = future.state;
      if (state.state === 'pending') return send(response, 408, { detail: 'Timeout waiting for result' });
      // SkyRL answers a failed request with HTTP 400 and its message.
      if (state.state === 'failed') return hosted ? send(response, 200, { error: state.error, category: state.category }) : send(response, 400, { detail: state.error });
      return send(response, 200, state.result);
    }
    if (name === 'create_sampling_session') {
      const request = requestSchemas.create_sampling_session.parse(body);
      let files: Record<string, Uint8Array> | null = null;
      if (request.model_path) {
        const checkpoint = saved.get(request.model_path);
        if (checkpoint === undefined || !request.model_path.includes('/sampler_weights/')) return send(response, 404, { detail: `Checkpoint not found: ${request.model_path}` });
        files = checkpoint.files;
      } else if (request.base_model !== options.baseModel) return send(response, 400, { detail: `base model '${String(request.base_model)}' is not served here` });
      const id = `sampling-${nextId++}`;
      samplingSessions.set(id, { files, lastSeqId: -1 });
      return send(response, 200, { sampling_session_id: id });
    }
    if (name === 'asample') {
      const request = requestSchemas.asample.parse(body);
      const session = samplingSessions.get(request.sampling_session_id);
      if (session === undefined) return send(response, 404, { detail: 'Sampling session not found' });
      received.push({ path: name, modelId: request.sampling_session_id, seqId: request.seq_id });
      if (request.seq_id <= session.lastSeqId) return send(response, 400, { detail: `seq_id ${request.seq_id} is out of order: the last sample of this session had seq_id ${session.lastSeqId}` });
      session.lastSeqId = request.seq_id;
      const run = samplerQueue.then(() => {
        if (fault === 'user-error') throw new UserError('injected user error on asample');
        return sampler.sample(session.files, request);
      });
      samplerQueue = run.catch(() => undefined);
      return send(response, 200, { request_id: startFuture(() => run) });
    }
    if (name === 'create_model') {
      const request = requestSchemas.create_model.parse(body);
      const modelId = `model-${nextId++}`;
      const engine = createLocalTrainingEngine({
        modelDirectory: options.modelDirectory,
        modelId: options.baseModel,
        checkpointDirectory: checkpoints,
        retainedCheckpoints: 100_000,
        lora: { rank: request.lora_config.rank, alpha: options.loraAlpha ?? 32 },
        optimizer: { beta1: adam.beta1, beta2: adam.beta2, weightDecay: adam.weight_decay, maxGradientNorm: adam.grad_clip_norm > 0 ? adam.grad_clip_norm : 1e30 },
        workerUrl: options.workerUrl,
      });
      engine.catch(() => undefined);
      const requestId = startFuture(async () => {
        if (request.base_model !== options.baseModel) throw new UserError(`base model '${request.base_model}' is not served here (${options.baseModel})`);
        await engine;
        models.set(modelId, { engine, sdkVersion: sessionVersions.get(request.session_id) ?? '', trainUnembed: request.lora_config.train_unembed ?? true, lastSeqId: 0, requests: 0, queue: Promise.resolve(), byKey: new Map() });
        return { model_id: modelId, type: 'create_model' };
      });
      return send(response, 200, { request_id: requestId, model_id: modelId });
    }
    const modelId = typeof body.model_id === 'string' ? body.model_id : '';
    const model = models.get(modelId);
    if (model === undefined) return send(response, 404, { detail: `Model not found: ${modelId}` });
    if (name === 'unload_model') {
      models.delete(modelId);
      const requestId = startFuture(async () => {
        await model.queue.catch(() => undefined);
        await (await model.engine).close();
        return { model_id: modelId, type: 'unload_model' };
      });
      return send(response, 200, { request_id: requestId, model_id: modelId });
    }
    // SDK 0.25 and later send forward_backward only as protobuf: JSON under that claim is not theirs.
    const [major = 0, minor = 0] = model.sdkVersion.split('.').map(Number);
    if (hosted && name === 'forward_backward' && (major > 0 || minor >= 25)) return send(response, 415, { detail: `SDK ${model.sdkVersion} sends forward_backward as application/x-protobuf, not JSON` });
    const seqId = typeof body.seq_id === 'number' ? body.seq_id : null;
    received.push({ path: name, modelId, seqId });
    const key = typeof request.headers['x-idempotency-key'] === 'string' ? request.headers['x-idempotency-key'] : null;
    const earlier = key === null ? undefined : model.byKey.get(key);
    if (earlier !== undefined) {
      // A resubmission (after 410): a new future with the first one's outcome, not a second run.
      const first = futures.get(earlier);
      const requestId = startFuture(async () => {
        await first?.done;
        if (first?.state.state === 'failed') throw first.state.category === 'user' ? new UserError(first.state.error) : new Error(first.state.error);
        return first?.state.state === 'done' ? first.state.result : null;
      });
      return send(response, 200, { request_id: requestId, model_id: modelId });
    }
    if (seqId === null || seqId <= model.lastSeqId) return send(response, 400, { detail: `seq_id ${String(seqId)} is out of order: the last request of ${modelId} had seq_id ${model.lastSeqId}` });
    // The SDK leaves no gap in a model's seq_ids; a service applying them in order would wait for the missing one.
    if (hosted && seqId !== model.lastSeqId + 1) return send(response, 400, { detail: `seq_id ${seqId} leaves a gap: the last request of ${modelId} had seq_id ${model.lastSeqId}` });
    model.lastSeqId = seqId;
    const first = model.requests === 0;
    model.requests += 1;
    const run = model.queue.then(async () => {
      if (fault === 'user-error') throw new UserError(`injected user error on ${name}`);
      return runModelRequest(name, modelId, body, await model.engine, first, model.trainUnembed);
    });
    model.queue = run.catch(() => undefined);
    const requestId = startFuture(() => run);
    if (key !== null) model.byKey.set(key, requestId);
    return send(response, 200, { request_id: requestId, model_id: modelId });
  }

  let url = '';
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, { detail: error instanceof Error ? error.message : String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  url = `http://127.0.0.1:${port}`;

  return {
    url,
    inject: (fault) => void faults.push({ path: fault.path, kind: fault.kind, times: fault.times ?? 1 }),
    received,
    heartbeats: () => heartbeats,
    tokenExchanges: () => jwts.issued(),
    forwardBackwardAdvantages,
    liveModels: () => models.size,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...models.values()].map(async (model) => (await model.engine.catch(() => null))?.close()));
      await sampler.dispose();
      models.clear();
      rmSync(checkpoints, { recursive: true, force: true });
    },
  };
}
