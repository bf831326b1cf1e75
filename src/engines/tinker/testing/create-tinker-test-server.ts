/**
 * A Tinker-protocol server for tests, built from the published protocol (`engines.md` §5, SkyRL's
 * `skyrl/tinker/api.py`): the JSON endpoints, futures polled through `retrieve_future` (held up to
 * `holdMs`, then 408), failed requests as `{error, category}`, HTTP errors as FastAPI's `{detail}`,
 * `X-API-Key`, per-model `seq_id`s that must increase (a resubmission with the same
 * `X-Idempotency-Key` gets the first result), and `load_weights` only as a model's first request.
 *
 * The losses are computed for real: each training client is a local training engine on a tiny
 * model. A Tinker datum (input = full[:-1], targets = full[1:]) becomes a local datum whose prompt
 * is the first token and whose response is every target, with mask 1 and `batchLossTokens` 1, so
 * the local engine's "sum over loss tokens / batchLossTokens" is Tinker's plain sum. Tinker's
 * `ppo` thresholds (1 − ε_lo, 1 + ε_hi) map back onto the local `ppo` loss's ε.
 *
 * Sampling (`create_sampling_session`, `asample`) runs on a transformer in this process: the base
 * model, or the adapter a `save_weights_for_sampler` saved, with the local sampler's log-probs,
 * `prompt_logprobs` from a score of the whole prompt (the first entry null, as Tinker's).
 *
 * `inject` makes the next matching requests meet a fault, so clients can be tested against 408s,
 * `try_again`, expired futures (410), 5xx, dropped connections and user errors.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import { createLocalTrainingEngine } from '../../local/create-local-training-engine.js';
import { loadTransformerFromFolder, type Transformer } from '../../../model/transformer.js';
import { initializeTensorBackend } from '../../../tensor/initialize-tensor-backend.js';
import type { TrainingDatum, TrainingEngine, TrainingLoss } from '../../../spec/training-engine.js';
import { requestSchemas, tinkerPathOf, type WireDatum } from '../tinker-api.js';
import { tinkerLossOf } from '../tinker-datums.js';
import { writeTarGz } from './write-tar-gz.js';

export type TinkerFaultKind = 'http-500' | 'drop' | '408' | 'try-again' | 'expire' | 'user-error';

export interface TinkerTestServerOptions {
  /** The tiny model folder every training client trains. */
  modelDirectory: string;
  /** The one base model the server trains, by name. */
  baseModel: string;
  /** When set, requests without this `X-API-Key` get 401. */
  apiKey?: string;
  /** The compiled trainer worker (`dist/engines/local/trainer-worker.js`). */
  workerUrl: URL;
  /** LoRA alpha of every client; default 32, as SkyRL. */
  loraAlpha?: number;
  /** The only AdamW settings `optim_step` accepts besides the learning rate (the local engine fixes them at start). */
  adam?: { beta1: number; beta2: number; eps: number; weight_decay: number; grad_clip_norm: number };
  /** How long `retrieve_future` holds a pending future before answering 408; default 100 ms. */
  holdMs?: number;
}

export interface TinkerTestServer {
  url: string;
  /** The next `times` requests to `path` (a `/api/v1/` name) meet `kind`. */
  inject(fault: { path: string; kind: TinkerFaultKind; times?: number }): void;
  /** Model-scoped requests as they arrived: path, model and seq_id. */
  readonly received: { path: string; modelId: string; seqId: number | null }[];
  readonly heartbeats: () => number;
  /** Training clients not unloaded. */
  readonly liveModels: () => number;
  close(): Promise<void>;
}

type FutureState = { state: 'pending' } | { state: 'done'; result: unknown } | { state: 'failed'; error: string; category: 'user' | 'server' };

class UserError extends Error {}

const defaultAdam = { beta1: 0.9, beta2: 0.98, eps: 1e-8, weight_decay: 0.1, grad_clip_norm: 1 };

export async function createTinkerTestServer(options: TinkerTestServerOptions): Promise<TinkerTestServer> {
  const adam = options.adam ?? defaultAdam;
  const holdMs = options.holdMs ?? 100;
  const checkpoints = mkdtempSync(path.join(tmpdir(), 'clawrl-tinker-server-'));
  const futures = new Map<string, { state: FutureState; done: Promise<void>; expired: boolean }>();
  const faults: { path: string; kind: TinkerFaultKind; times: number }[] = [];
  const received: TinkerTestServer['received'] = [];
  const models = new Map<string, { engine: Promise<TrainingEngine>; lastSeqId: number; requests: number; queue: Promise<unknown>; byKey: Map<string, string> }>();
  /** Saved weights by tinker path: the local state name and the adapter files of a weights-only load. */
  const saved = new Map<string, { stateName: string | null; files: Record<string, Uint8Array> }>();
  let nextId = 1;
  let heartbeats = 0;
  const samplingSessions = new Map<string, { files: Record<string, Uint8Array> | null; lastSeqId: number }>();
  let sampler: Promise<{ transformer: Transformer; base: Record<string, Uint8Array> }> | null = null;
  let samplerQueue: Promise<unknown> = Promise.resolve();

  /** The in-process sampling transformer, loaded on the first sampling request. */
  function samplerOf() {
    sampler ??= (async () => {
      await initializeTensorBackend({ backend: 'cpu' });
      const transformer = await loadTransformerFromFolder(options.modelDirectory);
      return { transformer, base: await transformer.exportAdapter({ baseModelNameOrPath: options.baseModel }) };
    })();
    return sampler;
  }

  async function sample(files: Record<string, Uint8Array> | null, request: z.infer<typeof requestSchemas.asample>) {
    const { transformer, base } = await samplerOf();
    transformer.importAdapter(files ?? base);
    const prompt = request.prompt.chunks.flatMap((chunk) => chunk.tokens);
    const params = request.sampling_params;
    const stop = (params.stop ?? []).filter((entry): entry is number => typeof entry === 'number');
    if ((params.stop ?? []).length !== stop.length) throw new UserError('this server takes stop token ids only');
    const { sequences } = await transformer.sample({
      promptTokenIds: prompt, n: request.num_samples, maxTokens: params.max_tokens, temperature: params.temperature, topP: params.top_p,
      topK: params.top_k > 0 ? params.top_k : 0, stopTokenIds: stop, ...(params.seed === null || params.seed === undefined ? {} : { seed: params.seed }),
    });
    const wantsPrompt = request.prompt_logprobs || request.topk_prompt_logprobs > 0;
    const scored = wantsPrompt && prompt.length > 1 ? await transformer.score({ promptTokenIds: prompt.slice(0, 1), continuationTokenIds: prompt.slice(1), topLogprobs: request.topk_prompt_logprobs }) : null;
    return {
      sequences: sequences.map((sequence) => ({ tokens: sequence.tokenIds, logprobs: sequence.logprobs, stop_reason: sequence.finishReason === 'length' ? 'length' : 'stop' })),
      prompt_logprobs: scored === null ? null : [null, ...scored.logprobs],
      topk_prompt_logprobs: scored === null || request.topk_prompt_logprobs === 0 ? null : [null, ...scored.top.map((entries) => entries.map((entry) => [entry.tokenId, entry.logprob]))],
      type: 'sample',
    };
  }

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

  /** A Tinker datum as the local engine's datum (see the header). */
  function localDatumOf(datum: WireDatum, withAdvantages: boolean): TrainingDatum {
    const input = datum.model_input.chunks.flatMap((chunk) => chunk.tokens);
    const targets = datum.loss_fn_inputs.target_tokens?.data ?? [];
    const logprobs = datum.loss_fn_inputs.logprobs?.data ?? [];
    const advantages = datum.loss_fn_inputs.advantages?.data ?? [];
    if (targets.length !== input.length || logprobs.length !== input.length || advantages.length !== input.length) {
      throw new UserError(`target_tokens, logprobs and advantages need one entry per input token (${input.length})`);
    }
    if (targets.slice(0, -1).some((token, index) => token !== input[index + 1])) throw new UserError('this server trains next-token data only: target_tokens must be the input shifted by one');
    return {
      promptTokenIds: input.slice(0, 1),
      responseTokenIds: targets,
      lossMask: targets.map(() => 1),
      advantages: withAdvantages ? advantages : advantages.map(() => 0),
      rolloutLogprobs: logprobs,
      temperature: 1,
    };
  }

  async function forwardBackward(engine: TrainingEngine, input: z.infer<typeof requestSchemas.forward_backward>['forward_backward_input'], forwardOnly: boolean) {
    const config = input.loss_fn_config ?? {};
    let loss: TrainingLoss;
    if (input.loss_fn === 'importance_sampling') loss = { name: 'importance_sampling' };
    else if (input.loss_fn === 'ppo') loss = { name: 'ppo', clipLow: 1 - (config.clip_low_threshold ?? 0.8), clipHigh: (config.clip_high_threshold ?? 1.2) - 1 };
    else throw new UserError(`loss_fn '${input.loss_fn}' is not supported by this server (importance_sampling, ppo)`);
    // A forward pass runs with zero advantages: zero gradients, the same log-probs.
    const output = await engine.forwardBackward({ data: input.data.map((datum) => localDatumOf(datum, !forwardOnly)), loss, batchLossTokens: 1 });
    const batch = {
      lossFunction: loss.name === 'ppo' ? ('ppo' as const) : ('importance_sampling' as const),
      clip: loss.name === 'ppo' ? { clipLow: loss.clipLow, clipHigh: loss.clipHigh } : null,
      sequences: input.data.map((datum) => ({ tokens: [], logprobs: datum.loss_fn_inputs.logprobs?.data ?? [], advantages: datum.loss_fn_inputs.advantages?.data ?? [] })),
    };
    return {
      loss_fn_output_type: 'TensorData',
      loss_fn_outputs: output.logprobs.map((values) => ({ logprobs: { data: values, dtype: 'float32', shape: [values.length] } })),
      metrics: { 'loss:sum': forwardOnly ? tinkerLossOf(batch, output.logprobs) : output.loss },
    };
  }

  async function runModelRequest(name: string, modelId: string, body: Record<string, unknown>, engine: TrainingEngine, first: boolean): Promise<unknown> {
    switch (name) {
      case 'forward':
        return forwardBackward(engine, requestSchemas.forward.parse(body).forward_input, true);
      case 'forward_backward':
        return forwardBackward(engine, requestSchemas.forward_backward.parse(body).forward_backward_input, false);
      case 'optim_step': {
        const params = requestSchemas.optim_step.parse(body).adam_params;
        for (const key of ['beta1', 'beta2', 'eps', 'weight_decay', 'grad_clip_norm'] as const) {
          if (Math.abs(params[key] - adam[key]) > 1e-12 * Math.max(1, Math.abs(adam[key]))) throw new UserError(`this server trains with ${key} ${adam[key]}, not ${params[key]}`);
        }
        const step = await engine.optimizerStep({ learningRate: params.learning_rate });
        return { metrics: { grad_norm: step.gradientNorm, learning_rate: step.learningRate } };
      }
      case 'save_weights_for_sampler':
      case 'save_weights': {
        const checkpoint = requestSchemas[name].parse(body).path;
        const kind = name === 'save_weights' ? 'weights' : 'sampler_weights';
        const target = tinkerPathOf(modelId, kind, checkpoint);
        const files = (await engine.publishWeights(0)).files;
        const stateName = kind === 'weights' ? await engine.saveState(`${modelId}__${checkpoint}`) : null;
        saved.set(target, { stateName, files });
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

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const name = (request.url ?? '').replace(/^\/api\/v1\//, '');
    if (options.apiKey !== undefined && request.headers['x-api-key'] !== options.apiKey) return send(response, 401, { detail: 'Invalid API key' });
    const fault = takeFault(name);
    if (fault === 'drop') return void request.socket.destroy();
    if (fault === 'http-500') return send(response, 500, { detail: 'Internal Server Error' });
    if (request.method === 'GET' && name === 'get_server_capabilities') return send(response, 200, { supported_models: [{ model_name: options.baseModel }], supported_loss_fns: ['importance_sampling', 'ppo'] });
    if (request.method === 'GET' && name === 'healthz') return send(response, 200, { status: 'ok' });
    // Checkpoint archives as SkyRL serves them: a 302 to the download of the sampler weights' .tar.gz.
    const archive = /^training_runs\/([A-Za-z0-9_-]+)\/checkpoints\/([A-Za-z0-9_-]+)\/(archive|download)$/.exec(name);
    if (request.method === 'GET' && archive !== null) {
      const [, modelId = '', checkpoint = '', kind] = archive;
      const stored = saved.get(tinkerPathOf(modelId, 'sampler_weights', checkpoint));
      if (stored === undefined) return send(response, 404, { detail: `Checkpoint not found: ${modelId}/${checkpoint}` });
      if (kind === 'archive') {
        response.writeHead(302, { Location: `/api/v1/training_runs/${modelId}/checkpoints/${checkpoint}/download` });
        return void response.end();
      }
      response.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      return void response.end(writeTarGz(Object.fromEntries(Object.entries(stored.files).map(([file, bytes]) => [`${checkpoint}/${file}`, bytes]))));
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
    if (schema === undefined) return send(response, 404, { detail: 'Not Found' });
    const checked = schema.safeParse(body);
    if (!checked.success) return send(response, 422, { detail: checked.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ') });

    if (name === 'create_session') return send(response, 200, { session_id: `session-${nextId++}`, info_message: null, warning_message: null, error_message: null });
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
      if (state.state === 'failed') return send(response, 200, { error: state.error, category: state.category });
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
        return sample(session.files, request);
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
        models.set(modelId, { engine, lastSeqId: 0, requests: 0, queue: Promise.resolve(), byKey: new Map() });
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
    model.lastSeqId = seqId;
    const first = model.requests === 0;
    model.requests += 1;
    const run = model.queue.then(async () => {
      if (fault === 'user-error') throw new UserError(`injected user error on ${name}`);
      return runModelRequest(name, modelId, body, await model.engine, first);
    });
    model.queue = run.catch(() => undefined);
    const requestId = startFuture(() => run);
    if (key !== null) model.byKey.set(key, requestId);
    return send(response, 200, { request_id: requestId, model_id: modelId });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, { detail: error instanceof Error ? error.message : String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    inject: (fault) => void faults.push({ path: fault.path, kind: fault.kind, times: fault.times ?? 1 }),
    received,
    heartbeats: () => heartbeats,
    liveModels: () => models.size,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...models.values()].map(async (model) => (await model.engine.catch(() => null))?.close()));
      if (sampler !== null) (await sampler.catch(() => null))?.transformer.dispose();
      models.clear();
      rmSync(checkpoints, { recursive: true, force: true });
    },
  };
}
