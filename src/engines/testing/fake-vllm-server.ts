/**
 * A deterministic stand-in for a vLLM (or SGLang, or plain OpenAI-compatible) server, for tests
 * and benchmarks: real HTTP on 127.0.0.1, the engines' exact wire shapes, a fake model whose
 * token ids and log-probs are reproducible (see fake-model.ts), and failure modes for error paths.
 */
import { access } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { handleChatCompletions, handleCompletions, handleTokenize, type FakeRouteContext } from './fake-chat-completions.js';
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
  /** SGLang `--incremental-streaming-output`: stream only new ids per chunk. */
  incrementalStreamOutput?: boolean;
  maxModelLength?: number;
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
}

export interface FakeVllmServer {
  url: string;
  readonly requests: RecordedRequest[];
  /** Adapters loaded through the LoRA endpoints, by name, with the path they came from. */
  readonly adapters: ReadonlyMap<string, string>;
  setFailMode(mode: FakeFailMode | null): void;
  /** Resolves once every recorded request has finished or been disconnected. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const generationRoutes = new Set(['/v1/chat/completions', '/v1/completions', '/generate']);

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
  const pending = new Set<Promise<void>>();
  let failMode = options.failMode ?? null;
  let requestNumber = 0;

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

  async function loadAdapter(body: FakeBody, nativeSglang: boolean): Promise<FakeResponse> {
    const name = asString(body['lora_name']);
    const path = asString(body['lora_path']);
    if (name === undefined || path === undefined) return errorResponse(400, 'lora_name and lora_path are required', 'BadRequestError');
    if (adapters.has(name)) return errorResponse(400, `The lora adapter '${name}' has already been loaded.`, 'InvalidUserInput');
    try {
      await access(join(path, 'adapter_config.json'));
    } catch {
      return errorResponse(400, `No adapter found for ${path}`, 'BadRequestError');
    }
    adapters.set(name, path);
    if (nativeSglang) return { kind: 'json', status: 200, body: { success: true, error_message: '', loaded_adapters: Object.fromEntries(adapters) } };
    return { kind: 'text', status: 200, body: `Success: LoRA adapter '${name}' added successfully.` };
  }

  function unloadAdapter(body: FakeBody, nativeSglang: boolean): FakeResponse {
    const name = asString(body['lora_name']) ?? '';
    if (!adapters.delete(name)) return errorResponse(404, `The lora adapter '${name}' cannot be found.`, 'NotFoundError');
    if (nativeSglang) return { kind: 'json', status: 200, body: { success: true, error_message: '', loaded_adapters: Object.fromEntries(adapters) } };
    return { kind: 'text', status: 200, body: `Success: LoRA adapter '${name}' removed successfully.` };
  }

  async function route(method: string, path: string, body: FakeBody): Promise<FakeResponse> {
    requestNumber += 1;
    const selected = asString(body['model']) ?? baseModel;
    const context: FakeRouteContext = { mode, model: selected, requestNumber, created, maxModelLength };
    const knownModel = selected === baseModel || adapters.has(selected);
    if (method === 'GET' && path === '/v1/models') return { kind: 'json', status: 200, body: models() };
    if (method !== 'POST') return errorResponse(404, `${method} ${path} not found`, 'NotFoundError');
    if ((path === '/v1/chat/completions' || path === '/v1/completions') && !knownModel) {
      return errorResponse(404, `The model \`${selected}\` does not exist.`, 'NotFoundError', 'model');
    }
    if (path === '/v1/chat/completions') return handleChatCompletions(body, context);
    if (path === '/v1/completions' && mode === 'vllm') return handleCompletions(body, context);
    if (path === '/tokenize' && mode === 'vllm') return handleTokenize(body, context);
    if (path === '/v1/load_lora_adapter' && mode === 'vllm') return loadAdapter(body, false);
    if (path === '/v1/unload_lora_adapter' && mode === 'vllm') return unloadAdapter(body, false);
    if (mode === 'sglang') {
      if (path === '/load_lora_adapter') return loadAdapter(body, true);
      if (path === '/unload_lora_adapter') return unloadAdapter(body, true);
      if (path === '/generate') {
        const adapter = body['lora_path'];
        if (adapter !== undefined && adapter !== null && !(typeof adapter === 'string' && adapters.has(adapter))) {
          return errorResponse(400, `lora_path ${String(adapter)} is not loaded`, 'BadRequestError', 'lora_path');
        }
        return handleGenerate(body, { requestNumber, incrementalStreamOutput: options.incrementalStreamOutput === true, weightVersion: 'default' });
      }
    }
    return errorResponse(404, `${method} ${path} not found`, 'NotFoundError');
  }

  async function writeStream(response: ServerResponse, chunks: unknown[], isClosed: () => boolean, markDropped: () => void): Promise<void> {
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
    const failing = generationRoutes.has(path) ? failMode : null;
    if (failing === 'hang' || (failing === 'stall-mid-stream' && asRecord(body)['stream'] !== true)) {
      await closed;
      return;
    }
    let answer: FakeResponse;
    if (failing === 'http-500') answer = errorResponse(500, 'fake internal server error', 'InternalServerError');
    else if (failing === 'http-429') answer = errorResponse(429, 'fake rate limit', 'RateLimitError');
    else answer = await route(method, path, asRecord(body));
    if (isClosed()) return;
    if (answer.kind === 'stream') {
      await writeStream(response, answer.chunks, isClosed, () => {
        dropped = true;
      });
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
    setFailMode(mode) {
      failMode = mode;
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
