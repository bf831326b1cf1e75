/**
 * HTTP to an inference server with clawrl's error semantics: HTTP errors and network failures
 * become `upstream_error` (retryable for 429, 5xx and dropped connections), silence longer than
 * `timeoutMs` before the response or between stream chunks becomes `upstream_timeout`, and a
 * caller's abort cancels the request (the socket closes, so the server stops generating).
 */
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { readServerSentEvents } from './server-sent-events.js';

export interface UpstreamClientOptions {
  /** Server root; a trailing `/v1` is tolerated and removed. */
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  fetch?: typeof fetch;
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

// vLLM: {error:{message}} (older: {message}); SGLang: {error:{message}} or FastAPI {detail}.
const errorBodySchema = z.object({
  error: z.union([z.object({ message: z.string().nullish() }), z.string()]).nullish(),
  message: z.string().nullish(),
  detail: z.unknown().nullish(),
});

function upstreamMessageOf(text: string): string {
  try {
    const parsed = errorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success) {
      const { error, message, detail } = parsed.data;
      const found = typeof error === 'string' ? error : (error?.message ?? message ?? (typeof detail === 'string' ? detail : undefined));
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
   * POSTs JSON and yields each SSE `data` payload until `[DONE]`. Ends quietly, without
   * yielding more, when `signal` aborts.
   */
  stream(path: string, body: unknown, signal: AbortSignal): AsyncGenerator<string>;
}

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const root = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  const fetchImplementation = options.fetch ?? globalThis.fetch;
  const headers = (accept: string): Record<string, string> => ({
    'content-type': 'application/json',
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

  async function httpError(response: Response, path: string): Promise<ClawrlError> {
    const message = upstreamMessageOf(await response.text());
    const cause = new UpstreamHttpError(response.status, message);
    const text = `${options.name} answered ${path} with HTTP ${response.status}: ${message}`;
    if (response.status === 400 && /context length|context window|maximum model length/i.test(message)) {
      return new ClawrlError('context_length_exceeded', text, { cause });
    }
    return new ClawrlError('upstream_error', text, { cause, retryable: response.status === 429 || response.status >= 500 });
  }

  /** Runs one request under a fresh controller linked to the caller's signal. */
  async function withController<T>(signal: AbortSignal | undefined, run: (controller: AbortController, deadline: Deadline) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const deadline = new Deadline(controller, options.timeoutMs);
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await run(controller, deadline);
    } finally {
      deadline.clear();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async function post(path: string, body: unknown, signal: AbortSignal | undefined): Promise<string> {
    signal?.throwIfAborted();
    return withController(signal, async (controller, deadline) => {
      deadline.arm();
      try {
        const response = await fetchImplementation(`${root}${path}`, {
          method: 'POST',
          headers: headers('application/json'),
          body: JSON.stringify(body),
          signal: controller.signal,
        });
        if (!response.ok) throw await httpError(response, path);
        return await response.text();
      } catch (error) {
        classify(error, deadline, signal, path);
        // Only a caller's abort reaches here: surface it as the standard abort error.
        signal?.throwIfAborted();
        throw error;
      }
    });
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

    async *stream(path, body, signal) {
      if (signal.aborted) return;
      const controller = new AbortController();
      const deadline = new Deadline(controller, options.timeoutMs);
      const onAbort = (): void => controller.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      let drained = false;
      try {
        deadline.arm();
        let response: Response;
        try {
          response = await fetchImplementation(`${root}${path}`, {
            method: 'POST',
            headers: headers('text/event-stream'),
            body: JSON.stringify(body),
            signal: controller.signal,
          });
          if (!response.ok) throw await httpError(response, path);
        } catch (error) {
          classify(error, deadline, signal, path);
          return;
        }
        const responseBody = response.body;
        if (responseBody === null) throw new ClawrlError('upstream_error', `${options.name} answered ${path} without a body`);
        const reader = responseBody.getReader();
        async function* chunks(): AsyncGenerator<Uint8Array> {
          for (;;) {
            deadline.arm();
            let result: Awaited<ReturnType<typeof reader.read>>;
            try {
              result = await reader.read();
            } catch (error) {
              classify(error, deadline, signal, path);
              return;
            } finally {
              // The caller's own processing time between chunks is not upstream silence.
              deadline.clear();
            }
            if (result.done) {
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
