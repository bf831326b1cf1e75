/**
 * HTTP to an inference server with clawrl's error semantics: HTTP errors and network failures
 * become `upstream_error` (retryable for 429, 5xx and dropped connections), silence longer than
 * `timeoutMs` before the response or between stream chunks becomes `upstream_timeout`, and a
 * caller's abort cancels the request (the socket closes, so the server stops generating).
 *
 * Requests go through `node:http(s)` with a keep-alive agent rather than `fetch`: on the
 * gateway's hot path (a 40 KB body out, a streamed answer back, per agent turn) fetch's
 * web-stream and request-object machinery cost about a tenth of the HTTP thread's CPU.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { readServerSentEvents } from './server-sent-events.js';

/**
 * A request body already serialized as JSON, in parts sent one after another (text as UTF-8);
 * any other body is sent as `JSON.stringify(body)`.
 */
export class JsonBody {
  constructor(readonly parts: readonly (string | Buffer)[]) {}
}

export interface UpstreamClientOptions {
  /** Server root; a trailing `/v1` is tolerated and removed. */
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  /** Names the upstream in error messages, e.g. `vllm`. */
  name: string;
}

/** The cause attached to errors from an upstream that answered with an HTTP error. */
export class UpstreamHttpError extends Error {
  readonly status: number;
  readonly upstreamMessage: string;

  constructor(status: number, upstreamMessage: string) {
    super(`HTTP ${status}: ${upstreamMessage}`);
    this.name = 'UpstreamHttpError';
    this.status = status;
    this.upstreamMessage = upstreamMessage;
  }
}

// vLLM: {error:{message}} (older: {message}); SGLang: {error:{message}}, FastAPI {detail}, or for
// its LoRA endpoints {success:false, error_message}.
const errorBodySchema = z.object({
  error: z.union([z.object({ message: z.string().nullish() }), z.string()]).nullish(),
  message: z.string().nullish(),
  error_message: z.string().nullish(),
  detail: z.unknown().nullish(),
});

function upstreamMessageOf(text: string): string {
  try {
    const parsed = errorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success) {
      const { error, message, detail } = parsed.data;
      const found =
        typeof error === 'string' ? error : (error?.message ?? message ?? parsed.data.error_message ?? (typeof detail === 'string' ? detail : undefined));
      if (found) return found;
    }
  } catch {
    // Not JSON: the text itself is the message.
  }
  return text.trim().slice(0, 500) || '(empty body)';
}

class Deadline {
  timedOut = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly controller: AbortController,
    private readonly timeoutMs: number,
  ) {}

  arm(): void {
    this.clear();
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.timeoutMs);
  }

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

export interface UpstreamClient {
  /** POSTs JSON and returns the parsed JSON answer. */
  postJson(path: string, body: unknown, signal?: AbortSignal): Promise<unknown>;
  /** POSTs JSON and returns the answer's text (vLLM's LoRA endpoints answer plain text). */
  postForText(path: string, body: unknown, signal?: AbortSignal): Promise<string>;
  /**
   * POSTs JSON (a `JsonBody` as it is) and yields each SSE `data` payload until `[DONE]`. Ends quietly, without
   * yielding more, when `signal` aborts.
   */
  stream(path: string, body: unknown, signal: AbortSignal): AsyncGenerator<string>;
  /** Closes idle keep-alive connections. */
  close(): void;
}

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const root = new URL(options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, ''));
  const secure = root.protocol === 'https:';
  const basePath = root.pathname.replace(/\/+$/, '');
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;
  const headers = (accept: string, length: number): Record<string, string | number> => ({
    'content-type': 'application/json',
    'content-length': length,
    accept,
    ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }),
  });

  /** Maps a failure to the right error; returns normally only for a caller's abort. */
  function classify(error: unknown, deadline: Deadline, signal: AbortSignal | undefined, path: string): void {
    if (deadline.timedOut) {
      throw new ClawrlError('upstream_timeout', `${options.name} did not answer ${path} within ${options.timeoutMs} ms`, { cause: error });
    }
    if (signal?.aborted) return;
    if (ClawrlError.isInstance(error)) throw error;
    const detail = error instanceof Error ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}` : String(error);
    throw new ClawrlError('upstream_error', `${options.name} request to ${path} failed: ${detail}`, { cause: error, retryable: true });
  }

  async function textOf(response: IncomingMessage): Promise<string> {
    response.setEncoding('utf8');
    let text = '';
    for await (const part of response) text += part as string;
    return text;
  }

  async function httpError(response: IncomingMessage, path: string): Promise<ClawrlError> {
    const status = response.statusCode ?? 0;
    const message = upstreamMessageOf(await textOf(response));
    const cause = new UpstreamHttpError(status, message);
    const text = `${options.name} answered ${path} with HTTP ${status}: ${message}`;
    if (status === 400 && /context length|context window|maximum model length/i.test(message)) {
      return new ClawrlError('context_length_exceeded', text, { cause });
    }
    return new ClawrlError('upstream_error', text, { cause, retryable: status === 429 || status >= 500 });
  }

  /** POSTs the body; resolves with the response once its headers arrived, rejects with an HTTP error. */
  function open(path: string, body: unknown, accept: string, signal: AbortSignal): Promise<IncomingMessage> {
    const parts = body instanceof JsonBody ? body.parts : [JSON.stringify(body)];
    const length = parts.reduce((sum, part) => sum + (typeof part === 'string' ? Buffer.byteLength(part) : part.length), 0);
    const requestOptions: RequestOptions = {
      protocol: root.protocol,
      hostname: root.hostname,
      port: root.port,
      path: `${basePath}${path}`,
      method: 'POST',
      agent,
      headers: headers(accept, length),
    };
    return new Promise((resolve, reject) => {
      const outgoing = send(requestOptions, (response) => {
        // Errors reach whoever reads the body; after an early stop nobody does, and the abort
        // that closes the connection must not surface as an unhandled 'error' event.
        response.on('error', () => undefined);
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve(response);
        else httpError(response, path).then(reject, reject);
      });
      outgoing.on('error', reject);
      // Destroying the request closes the socket, so the server sees the disconnect and stops.
      const onAbort = (): void => {
        reject(signal.reason);
        outgoing.destroy();
      };
      if (signal.aborted) onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      outgoing.once('close', () => signal.removeEventListener('abort', onAbort));
      for (const part of parts) outgoing.write(part);
      outgoing.end();
    });
  }

  async function post(path: string, body: unknown, signal: AbortSignal | undefined): Promise<string> {
    signal?.throwIfAborted();
    const controller = new AbortController();
    const deadline = new Deadline(controller, options.timeoutMs);
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      deadline.arm();
      return await textOf(await open(path, body, 'application/json', controller.signal));
    } catch (error) {
      classify(error, deadline, signal, path);
      // Only a caller's abort reaches here: surface it as the standard abort error.
      signal?.throwIfAborted();
      throw error;
    } finally {
      deadline.clear();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  return {
    async postJson(path, body, signal) {
      const text = await post(path, body, signal);
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        throw new ClawrlError('upstream_error', `${options.name} answered ${path} with malformed JSON: ${text.slice(0, 200)}`, { cause: error });
      }
    },

    postForText: post,

    close() {
      agent.destroy();
    },

    async *stream(path, body, signal) {
      if (signal.aborted) return;
      const controller = new AbortController();
      const deadline = new Deadline(controller, options.timeoutMs);
      const onAbort = (): void => controller.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      let drained = false;
      try {
        deadline.arm();
        let response: IncomingMessage;
        try {
          response = await open(path, body, 'text/event-stream', controller.signal);
        } catch (error) {
          classify(error, deadline, signal, path);
          return;
        }
        const reader = response[Symbol.asyncIterator]();
        async function* chunks(): AsyncGenerator<Uint8Array> {
          for (;;) {
            deadline.arm();
            let result: IteratorResult<Buffer>;
            try {
              result = (await reader.next()) as IteratorResult<Buffer>;
            } catch (error) {
              classify(error, deadline, signal, path);
              return;
            } finally {
              // The caller's own processing time between chunks is not upstream silence.
              deadline.clear();
            }
            if (result.done === true) {
              drained = true;
              return;
            }
            yield result.value;
          }
        }
        let sawDone = false;
        // After `[DONE]` the body is read to its end (servers close right after it), so the
        // connection is reused and nothing needs aborting.
        for await (const data of readServerSentEvents(chunks())) {
          if (signal.aborted) return;
          if (sawDone) continue;
          if (data.trim() === '[DONE]') sawDone = true;
          else yield data;
        }
      } finally {
        deadline.clear();
        signal.removeEventListener('abort', onAbort);
        // Closes the connection when the consumer stopped reading early; aborting a finished
        // request would only cost an AbortError per request.
        if (!drained) controller.abort();
      }
    },
  };
}
