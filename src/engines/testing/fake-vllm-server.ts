/**
 * A deterministic stand-in for a vLLM (or SGLang, or plain OpenAI-compatible) server, for tests
 * and benchmarks: real HTTP on 127.0.0.1, the engines' exact wire shapes, a fake model whose
 * token ids and log-probs are reproducible (see fake-model.ts), and failure modes for error paths.
 * Runtime LoRA and weight updates read the folders they are given as the real servers do
 * (check-peft-adapter-folder.ts) and refuse a malformed one in the server's own error shape; each
 * generation request records the model or adapter it was served with. The adapter limits are the
 * servers' own: SGLang's `--max-loaded-loras` refuses a load beyond it (as SGLang up to 0.5.3 does;
 * later versions evict instead), vLLM registers any number of adapters but holds only
 * `--max-cpu-loras` of them, and a request for one it let go reads its folder again.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleChatCompletions, handleCompletions, handleTokenize, type FakeRouteContext } from './fake-chat-completions.js';
import { checkModelFolder, checkPeftAdapterFolder } from './check-peft-adapter-folder.js';
import { handleGenerate } from './fake-sglang-generate.js';
import { asRecord, asString, errorResponse, type FakeBody, type FakeResponse } from './fake-wire.js';

export type FakeServerMode = 'vllm' | 'plain' | 'sglang';

/**
 * `http-500` / `http-429`: error bodies; `hang`: never answers; `garbage`: 200 with invalid JSON
 * (or an invalid SSE payload when streaming); `drop-mid-stream`: destroys the socket after two
 * chunks; `stall-mid-stream`: sends two chunks, then nothing. Only generation routes fail.
 */
export type FakeFailMode = 'http-500' | 'http-429' | 'hang' | 'garbage' | 'drop-mid-stream' | 'stall-mid-stream';

export interface FakeVllmServerOptions {
  port?: number;
  /** Delay before the response starts (time to first byte). */
  latencyMs?: number;
  /** Pace of streamed chunks; unlimited when absent. */
  tokensPerSecond?: number;
  mode?: FakeServerMode;
  /** The base model name served; default `fake-model`. */
  model?: string;
  failMode?: FakeFailMode | null;
  /**
   * vLLM started with `--enable-auto-tool-choice --tool-call-parser <parser>`. Without them, as stock
   * `vllm serve`, a chat request whose `tool_choice` is `"auto"` (vLLM's default when tools are given)
   * gets vLLM's HTTP 400. Default false.
   */
  autoToolChoice?: boolean;
  /** The server's `--api-key`: every route but the health ones needs it, as a bearer token. */
  apiKey?: string;
  /**
   * SGLang's `--admin-api-key`: its admin routes (LoRA loads and unloads, weight updates) take this
   * key, and once both keys are set only this one (sglang `python/sglang/srt/utils/auth.py`).
   */
  adminApiKey?: string;
  /** SGLang: false for a version before `sampling_seed` (its seeded sampler, 2025-09), which refuses the key. Default true. */
  samplingSeed?: boolean;
  /** SGLang `--incremental-streaming-output`: stream only new ids per chunk. */
  incrementalStreamOutput?: boolean;
  maxModelLength?: number;
  /**
   * SGLang `--max-loaded-loras`: a load while this many adapters are loaded is refused (HTTP 400,
   * SGLang's message). vLLM `--max-cpu-loras`: loads always succeed, the least recently used
   * adapter beyond this many leaves the cache, and a request for it reads its folder again
   * (`diskReloads`), failing as vLLM does when the folder is gone. Default: no limit.
   */
  maxLoadedAdapters?: number;
  /** Keep every request in `requests`; turn off for long benchmark runs. Default true. */
  recordRequests?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** The parsed JSON body; the raw text when it was not JSON; null when empty. */
  body: unknown;
  /** True when the client went away before the response was complete. */
  disconnected: boolean;
  /** Generation and scoring routes: the base model or the adapter name that served it. */
  served?: string;
  /** SGLang: the `weight_version` of the weights that served it. */
  weightVersion?: string;
}

export interface FakeVllmServer {
  url: string;
  readonly requests: RecordedRequest[];
  /** Adapters loaded through the LoRA endpoints, by name, with the path they came from. */
  readonly adapters: ReadonlyMap<string, string>;
  /** The most adapters loaded at once since the server started. */
  readonly peakAdapters: number;
  /** vLLM: requests whose adapter had left the `maxLoadedAdapters` cache, so its folder was read again. */
  readonly diskReloads: number;
  /** SGLang: the folder the weights were last updated from (null: the base model's) and their version. */
  readonly weights: { path: string | null; version: string };
  setFailMode(mode: FakeFailMode | null): void;
  /** The next `count` adapter loads or weight updates (`Infinity`: all, until called again with 0) fail as the server fails a load it cannot do. */
  failNextLoads(count: number, message?: string): void;
  /** Streams (those whose request body `matches`, default all) stop after their first two chunks (the first token is out) until the returned function is called. */
  holdStreams(matches?: (body: unknown) => boolean): () => void;
  /** Resolves once every recorded request has finished or been disconnected. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const generationRoutes = new Set(['/v1/chat/completions', '/v1/completions', '/generate']);
const sglangAdminRoutes = new Set(['/load_lora_adapter', '/unload_lora_adapter', '/update_weights_from_disk']);

/** SGLang's `decide_request_auth` (vLLM's `--api-key` is its NORMAL level): the key a route needs, or null. */
function requiredKey(mode: FakeServerMode, path: string, options: FakeVllmServerOptions): string | null {
  if (path.startsWith('/health')) return null;
  if (mode === 'sglang' && sglangAdminRoutes.has(path)) return options.adminApiKey ?? options.apiKey ?? null;
  return options.apiKey ?? null;
}

function sleep(milliseconds: number): Promise<void> {
  return milliseconds <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, milliseconds));
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export async function startFakeVllmServer(options: FakeVllmServerOptions = {}): Promise<FakeVllmServer> {
  const mode = options.mode ?? 'vllm';
  const baseModel = options.model ?? 'fake-model';
  const maxModelLength = options.maxModelLength ?? 4096;
  const created = Math.floor(Date.now() / 1000);
  const requests: RecordedRequest[] = [];
  const adapters = new Map<string, string>();
  /** vLLM's CPU cache of adapters, least recently used first. */
  const cached: string[] = [];
  let peakAdapters = 0;
  let diskReloads = 0;
  const weights: { path: string | null; version: string } = { path: null, version: 'default' };
  const pending = new Set<Promise<void>>();
  let failMode = options.failMode ?? null;
  let requestNumber = 0;
  let failingLoads: { count: number; message: string } = { count: 0, message: '' };
  let hold: { promise: Promise<void>; matches: (body: unknown) => boolean } | null = null;

  function takeLoadFailure(): string | null {
    if (failingLoads.count <= 0) return null;
    failingLoads = { ...failingLoads, count: failingLoads.count - 1 };
    return failingLoads.message;
  }

  const models = (): unknown => ({
    object: 'list',
    data: [baseModel, ...adapters.keys()].map((id) => ({
      id,
      object: 'model',
      created,
      owned_by: mode === 'plain' ? 'library' : 'vllm',
      root: id === baseModel ? baseModel : adapters.get(id),
      parent: id === baseModel ? null : baseModel,
      max_model_len: maxModelLength,
    })),
  });

  /** SGLang's LoRA answer (`LoadLoRAAdapterReqOutput`): HTTP 400 with `success: false` on failure. */
  function sglangLoraAnswer(errorMessage: string | null): FakeResponse {
    return { kind: 'json', status: errorMessage === null ? 200 : 400, body: { success: errorMessage === null, error_message: errorMessage ?? '', loaded_adapters: Object.fromEntries(adapters) } };
  }

  async function loadAdapter(body: FakeBody, nativeSglang: boolean): Promise<FakeResponse> {
    const name = asString(body['lora_name']);
    const path = asString(body['lora_path']);
    if (nativeSglang) {
      if (name === undefined || path === undefined) return sglangLoraAnswer('lora_name and lora_path are required');
      if (adapters.has(name)) return sglangLoraAnswer(`LoRA with name ${name} already exists. Loaded LoRAs: ${[...adapters.keys()].join(', ')}`);
      const limit = options.maxLoadedAdapters;
      if (limit !== undefined && adapters.size >= limit) {
        return sglangLoraAnswer(`Cannot load LoRA adapter ${name} at path ${path}. Maximum number of loaded LoRA adapters is ${limit}. Please unload some LoRA adapters before loading new ones.`);
      }
      const failure = takeLoadFailure() ?? (await checkPeftAdapterFolder(path, baseModel));
      if (failure !== null) return sglangLoraAnswer(`Failed to load LoRA adapter ${name}: ${failure}`);
      register(name, path);
      return sglangLoraAnswer(null);
    }
    if (name === undefined || path === undefined) return errorResponse(400, "Both 'lora_name' and 'lora_path' must be provided.", 'InvalidUserInput');
    if (adapters.has(name)) return errorResponse(400, `The lora adapter '${name}' has already been loaded.`, 'InvalidUserInput');
    const failure = takeLoadFailure() ?? (await checkPeftAdapterFolder(path, baseModel));
    // vLLM answers 404 when the folder has no adapter, 400 when the adapter is unusable.
    if (failure !== null) return errorResponse(failure.startsWith('No adapter found') ? 404 : 400, failure, failure.startsWith('No adapter found') ? 'NotFoundError' : 'BadRequestError');
    register(name, path);
    return { kind: 'text', status: 200, body: `Success: LoRA adapter '${name}' added successfully.` };
  }

  function register(name: string, path: string): void {
    adapters.set(name, path);
    peakAdapters = Math.max(peakAdapters, adapters.size);
    touchCached(name);
  }

  /** vLLM's `LRUCacheWorkerLoRAManager`: the adapter goes last, the oldest beyond the limit leaves. */
  function touchCached(name: string): void {
    const at = cached.indexOf(name);
    if (at >= 0) cached.splice(at, 1);
    cached.push(name);
    while (options.maxLoadedAdapters !== undefined && cached.length > options.maxLoadedAdapters) cached.shift();
  }

  /** vLLM serving a registered adapter its cache let go reads it from its folder again: its LoRA request carries the path. */
  async function reloadFromDisk(name: string): Promise<FakeResponse | null> {
    const path = adapters.get(name);
    if (path === undefined) return null;
    const evicted = mode === 'vllm' && !cached.includes(name);
    if (evicted) diskReloads += 1;
    const failure = evicted ? await checkPeftAdapterFolder(path, baseModel) : null;
    if (failure !== null) return errorResponse(400, `Loading lora ${name} failed: ${failure}`, 'BadRequestError');
    touchCached(name);
    return null;
  }

  function unloadAdapter(body: FakeBody, nativeSglang: boolean): FakeResponse {
    const name = asString(body['lora_name']) ?? '';
    const removed = adapters.delete(name);
    if (cached.includes(name)) cached.splice(cached.indexOf(name), 1);
    if (nativeSglang) return sglangLoraAnswer(removed ? null : `LoRA with name ${name} does not exist. Loaded LoRAs: ${[...adapters.keys()].join(', ')}`);
    if (!removed) return errorResponse(404, `The lora adapter '${name}' cannot be found.`, 'NotFoundError');
    return { kind: 'text', status: 200, body: `Success: LoRA adapter '${name}' removed successfully.` };
  }

  /** SGLang's `/update_weights_from_disk`: `{success, message, num_paused_requests}`, HTTP 400 on failure. */
  async function updateWeightsFromDisk(body: FakeBody): Promise<FakeResponse> {
    const path = asString(body['model_path']);
    const failure = path === undefined ? 'model_path is required' : (takeLoadFailure() ?? (await checkModelFolder(path)));
    if (failure !== null || path === undefined) {
      return { kind: 'json', status: 400, body: { success: false, message: `Failed to update weights: ${failure ?? ''}. Rolling back to original weights.`, num_paused_requests: 0 } };
    }
    weights.path = path === baseModel ? null : path;
    const version = body['weight_version'];
    let message = 'Succeeded to update model weights.';
    if (typeof version === 'string') {
      weights.version = version;
      message += ` Weight version updated to ${version}.`;
    }
    return { kind: 'json', status: 200, body: { success: true, message, num_paused_requests: 0 } };
  }

  async function route(method: string, path: string, body: FakeBody, record: RecordedRequest): Promise<FakeResponse> {
    requestNumber += 1;
    const selected = asString(body['model']) ?? baseModel;
    if (generationRoutes.has(path) || path === '/tokenize') record.served = path === '/generate' ? (asString(body['lora_path']) ?? baseModel) : selected;
    if (path === '/generate') record.weightVersion = weights.version;
    const context: FakeRouteContext = { mode, model: selected, requestNumber, created, maxModelLength, autoToolChoice: options.autoToolChoice === true };
    const knownModel = selected === baseModel || adapters.has(selected);
    if (method === 'GET' && path === '/v1/models') return { kind: 'json', status: 200, body: models() };
    if (method !== 'POST') return errorResponse(404, `${method} ${path} not found`, 'NotFoundError');
    if ((path === '/v1/chat/completions' || path === '/v1/completions') && !knownModel) {
      return errorResponse(404, `The model \`${selected}\` does not exist.`, 'NotFoundError', 'model');
    }
    if (generationRoutes.has(path)) {
      const reloadFailure = await reloadFromDisk(path === '/generate' ? (asString(body['lora_path']) ?? baseModel) : selected);
      if (reloadFailure !== null) return reloadFailure;
    }
    if (path === '/v1/chat/completions') return handleChatCompletions(body, context);
    if (path === '/v1/completions' && mode === 'vllm') return handleCompletions(body, context);
    if (path === '/tokenize' && mode === 'vllm') return handleTokenize(body, context);
    if (path === '/v1/load_lora_adapter' && mode === 'vllm') return loadAdapter(body, false);
    if (path === '/v1/unload_lora_adapter' && mode === 'vllm') return unloadAdapter(body, false);
    if (mode === 'sglang') {
      if (path === '/load_lora_adapter') return loadAdapter(body, true);
      if (path === '/unload_lora_adapter') return unloadAdapter(body, true);
      if (path === '/update_weights_from_disk') return updateWeightsFromDisk(body);
      if (path === '/generate') {
        const adapter = body['lora_path'];
        if (adapter !== undefined && adapter !== null && !(typeof adapter === 'string' && adapters.has(adapter))) {
          return errorResponse(400, `lora_path ${String(adapter)} is not loaded`, 'BadRequestError', 'lora_path');
        }
        return handleGenerate(body, { requestNumber, incrementalStreamOutput: options.incrementalStreamOutput === true, weightVersion: weights.version, samplingSeed: options.samplingSeed !== false });
      }
    }
    return errorResponse(404, `${method} ${path} not found`, 'NotFoundError');
  }

  async function writeStream(response: ServerResponse, chunks: unknown[], isClosed: () => boolean, markDropped: () => void, held: Promise<void> | null): Promise<void> {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const interval = options.tokensPerSecond === undefined ? 0 : 1000 / options.tokensPerSecond;
    for (const [index, chunk] of chunks.entries()) {
      if (isClosed()) return;
      if (index === 2 && failMode === 'drop-mid-stream') {
        markDropped();
        response.destroy();
        return;
      }
      if (index === 2 && failMode === 'stall-mid-stream') return;
      if (index === 2 && held !== null) await held;
      if (isClosed()) return;
      response.write(index === 1 && failMode === 'garbage' ? 'data: {"choices": [\n\n' : `data: ${JSON.stringify(chunk)}\n\n`);
      if (interval > 0) await sleep(interval);
    }
    response.end('data: [DONE]\n\n');
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const method = request.method ?? 'GET';
    const body = await readBody(request);
    const record: RecordedRequest = { method, path, body, disconnected: false };
    const held = hold !== null && hold.matches(body) ? hold.promise : null;
    if (options.recordRequests !== false) requests.push(record);
    let dropped = false;
    const closed = new Promise<void>((resolve) =>
      response.on('close', () => {
        if (!dropped && !response.writableFinished) record.disconnected = true;
        resolve();
      }),
    );
    const isClosed = (): boolean => response.destroyed || record.disconnected;
    await sleep(options.latencyMs ?? 0);
    const key = requiredKey(mode, path, options);
    if (key !== null && request.headers.authorization !== `Bearer ${key}`) {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'Unauthorized' }));
      return;
    }
    const failing = generationRoutes.has(path) ? failMode : null;
    if (failing === 'hang' || (failing === 'stall-mid-stream' && asRecord(body)['stream'] !== true)) {
      await closed;
      return;
    }
    let answer: FakeResponse;
    if (failing === 'http-500') answer = errorResponse(500, 'fake internal server error', 'InternalServerError');
    else if (failing === 'http-429') answer = errorResponse(429, 'fake rate limit', 'RateLimitError');
    else answer = await route(method, path, asRecord(body), record);
    if (isClosed()) return;
    if (answer.kind === 'stream') {
      await writeStream(
        response,
        answer.chunks,
        isClosed,
        () => {
          dropped = true;
        },
        held,
      );
      if (failMode === 'stall-mid-stream') await closed;
    } else if (failing === 'garbage') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"id": "chatcmpl-garbage", "choices": [');
    } else {
      const text = answer.kind === 'json' ? JSON.stringify(answer.body) : answer.body;
      response.writeHead(answer.status, { 'content-type': answer.kind === 'json' ? 'application/json' : 'text/plain' });
      response.end(text);
    }
  }

  const server = createServer((request, response) => {
    const task = handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
    pending.add(task);
    void task.finally(() => pending.delete(task));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    adapters,
    get peakAdapters() { return peakAdapters; },
    get diskReloads() { return diskReloads; },
    weights,
    setFailMode(mode) {
      failMode = mode;
    },
    failNextLoads(count, message = 'fake load failure: the server cannot load this version now') {
      failingLoads = { count, message };
    },
    holdStreams(matches = () => true) {
      let release = (): void => undefined;
      const promise = new Promise<void>((resolve) => {
        release = () => {
          hold = null;
          resolve();
        };
      });
      hold = { promise, matches };
      return release;
    },
    async settled() {
      await Promise.all([...pending]);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...pending]);
    },
  };
}
