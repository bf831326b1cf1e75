/**
 * A JSON client of the Tinker HTTP API (`engines.md` §5.1–5.3): one session with a heartbeat, and
 * model-scoped calls that take the model's next `seq_id` and are dispatched strictly in that
 * order (the service applies a model's requests in `seq_id` order, so a call is only sent once
 * every earlier call of the model was accepted; results are then awaited concurrently).
 *
 * Futures are polled through `retrieve_future` as §5.2 says: 408 or `{type: "try_again"}` means
 * not ready, poll again; 410 means the promise expired, so the same request (same `seq_id` and
 * `X-Idempotency-Key`) is submitted again; 5xx, 429 and connection errors are retried with
 * exponential back-off up to `maxAttempts`; a failed request (`{error, category}`, or SkyRL's HTTP
 * 400 `{detail}`) and any other 4xx fail at once, since sending them again cannot succeed.
 */
import { retryDelayMs } from '../../core/retry-delay.js';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { silentLogger, type Logger } from '../../spec/logger.js';
import {
  createModelBody,
  createModelResultSchema,
  createSessionBody,
  createSessionResponseSchema,
  futureResponseSchema,
  heartbeatBody,
  httpErrorBodySchema,
  requestFailedSchema,
  retrieveFutureBody,
  createSamplingSessionBody,
  samplingSessionResultSchema,
  serverCapabilitiesSchema,
  tryAgainSchema,
  unloadModelBody,
} from './tinker-api.js';

export interface TinkerRetryOptions {
  /** First back-off delay; doubles up to `maxDelayMs`. Default 250 ms. */
  initialDelayMs?: number;
  /** Default 10 s. */
  maxDelayMs?: number;
  /** Tries of one HTTP call on 5xx, 429 or a connection error (and resubmissions after 410). Default 8. */
  maxAttempts?: number;
}

export interface TinkerClientOptions {
  /** The service's base URL, e.g. `https://tinker.thinkingmachines.dev/services/tinker-prod` or SkyRL's `http://localhost:8000`. */
  url: string;
  /** Sent as `X-API-Key`. */
  apiKey: string;
  /** Default 10 s, as the SDK. */
  heartbeatIntervalMs?: number;
  retry?: TinkerRetryOptions;
  logger?: Logger;
  fetch?: typeof fetch;
}

export type TinkerServerCapabilities = z.output<typeof serverCapabilitiesSchema>;

export interface TinkerClient {
  readonly sessionId: string;
  serverCapabilities(): Promise<TinkerServerCapabilities>;
  /** A LoRA training client of `baseModel`; resolves with its `model_id`. */
  createModel(baseModel: string, rank: number): Promise<string>;
  /**
   * A model-scoped call to `/api/v1/<path>` with the model's next `seq_id`, sent after every
   * earlier call of the model was accepted; resolves with the future's result parsed by `schema`.
   */
  submit<Result>(modelId: string, path: string, body: (seqId: number) => object, schema: z.ZodType<Result>): Promise<Result>;
  unloadModel(modelId: string): Promise<void>;
  /** The `.tar.gz` of saved sampler weights `name` of `modelId` (redirects followed). */
  downloadCheckpointArchive(modelId: string, name: string): Promise<Uint8Array>;
  /**
   * A sampling session of the base model or of saved sampler weights; its `asample` calls go
   * through `submit` with its id, counting `seq_id` from 0 (the SDK's sampling counter).
   */
  createSamplingSession(source: { baseModel: string } | { modelPath: string }): Promise<string>;
  /** Stops the heartbeat. Idempotent. */
  close(): Promise<void>;
}

/** The SDK generation whose JSON protocol this client speaks (engines.md §5.1). */
const sdkVersion = '0.25.0';

interface HttpAnswer {
  status: number;
  body: unknown;
}

class RetryableFailure extends Error {}

function detailOf(body: unknown): string {
  const parsed = httpErrorBodySchema.safeParse(body);
  if (!parsed.success) return typeof body === 'string' ? body.slice(0, 300) : JSON.stringify(body)?.slice(0, 300) ?? '';
  const detail = parsed.data.detail ?? parsed.data.message ?? parsed.data.error;
  return typeof detail === 'string' ? detail : JSON.stringify(detail ?? body).slice(0, 300);
}

function clientErrorOf(path: string, answer: HttpAnswer): ClawrlError {
  const message = `Tinker ${path}: HTTP ${answer.status}: ${detailOf(answer.body)}`;
  if (answer.status === 401) return new ClawrlError('invalid_api_key', `${message} (check CLAWRL_TINKER_API_KEY)`);
  if (answer.status === 403) return new ClawrlError('permission_denied', message);
  if (answer.status === 404) return new ClawrlError('not_found', message);
  return new ClawrlError('invalid_request', message);
}

export async function createTinkerClient(options: TinkerClientOptions): Promise<TinkerClient> {
  const base = options.url.replace(/\/+$/, '');
  const fetchFunction = options.fetch ?? fetch;
  const logger = options.logger ?? silentLogger;
  const initialDelayMs = options.retry?.initialDelayMs ?? 250;
  const maxDelayMs = options.retry?.maxDelayMs ?? 10_000;
  const maxAttempts = options.retry?.maxAttempts ?? 8;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const delayOf = (attempt: number) => retryDelayMs(attempt + 1, { initialMs: initialDelayMs, maxMs: maxDelayMs });
  let closed = false;

  async function send(method: 'GET' | 'POST', path: string, body: object | undefined, idempotencyKey?: string): Promise<HttpAnswer> {
    let response: Response;
    try {
      response = await fetchFunction(`${base}/api/v1/${path}`, {
        method,
        headers: {
          'X-API-Key': options.apiKey,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...(idempotencyKey === undefined ? {} : { 'X-Idempotency-Key': idempotencyKey }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new RetryableFailure(`Tinker ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    const text = await response.text().catch(() => '');
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      // A non-JSON body (a proxy's HTML error page) is reported as text.
    }
    return { status: response.status, body: parsed };
  }

  /** One HTTP call, retried with back-off while the failure is transient. */
  async function call(method: 'GET' | 'POST', path: string, body?: object, idempotencyKey?: string, accept: (status: number) => boolean = (status) => status === 200): Promise<HttpAnswer> {
    let lastFailure = '';
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      if (attempt > 0) await sleep(delayOf(attempt - 1));
      if (closed) throw new ClawrlError('internal_error', 'the Tinker client is closed');
      try {
        const answer = await send(method, path, body, idempotencyKey);
        if (accept(answer.status)) return answer;
        if (answer.status >= 500 || answer.status === 429) {
          lastFailure = `HTTP ${answer.status}: ${detailOf(answer.body)}`;
          continue;
        }
        throw clientErrorOf(path, answer);
      } catch (error) {
        if (!(error instanceof RetryableFailure)) throw error;
        lastFailure = error.message;
      }
    }
    throw new ClawrlError('upstream_error', `Tinker ${path} failed ${maxAttempts} times: ${lastFailure}`, { retryable: true });
  }

  async function submitFuture(path: string, body: object, idempotencyKey: string): Promise<string> {
    const answer = await call('POST', path, body, idempotencyKey);
    const parsed = futureResponseSchema.safeParse(answer.body);
    if (!parsed.success) throw new ClawrlError('upstream_error', `Tinker ${path}: no request_id in ${JSON.stringify(answer.body).slice(0, 200)}`);
    return parsed.data.requestId;
  }

  async function awaitFuture<Result>(path: string, requestId: string, resubmit: () => Promise<string>, schema: z.ZodType<Result>): Promise<Result> {
    let current = requestId;
    let resubmissions = 0;
    for (;;) {
      const answer = await call('POST', 'retrieve_future', retrieveFutureBody(current), undefined, (status) => status === 200 || status === 408 || status === 410 || status === 400);
      // 408: the server held the poll until its own timeout; ask again at once.
      if (answer.status === 408) continue;
      if (answer.status === 410) {
        resubmissions += 1;
        if (resubmissions >= maxAttempts) throw new ClawrlError('upstream_error', `Tinker ${path}: the result expired ${resubmissions} times`, { retryable: true });
        logger.warn('a Tinker result expired before it was read; submitting the request again', { path, requestId: current });
        current = await resubmit();
        continue;
      }
      // SkyRL reports a failed request as HTTP 400 with its message in `detail`.
      if (answer.status === 400) throw new ClawrlError('invalid_request', `Tinker ${path} failed: ${detailOf(answer.body)}`);
      if (tryAgainSchema.safeParse(answer.body).success) {
        await sleep(initialDelayMs);
        continue;
      }
      const failed = requestFailedSchema.safeParse(answer.body);
      if (failed.success) {
        const { error, category } = failed.data;
        if (category === 'user') throw new ClawrlError('invalid_request', `Tinker ${path} rejected the request: ${error}`);
        throw new ClawrlError('upstream_error', `Tinker ${path} failed on the service (${category}): ${error}`, { retryable: true });
      }
      const result = schema.safeParse(answer.body);
      if (!result.success) throw new ClawrlError('upstream_error', `Tinker ${path}: unexpected result ${JSON.stringify(answer.body).slice(0, 300)}`);
      return result.data;
    }
  }

  async function request<Result>(path: string, body: object, schema: z.ZodType<Result>): Promise<Result> {
    const key = randomUUID();
    const requestId = await submitFuture(path, body, key);
    return awaitFuture(path, requestId, () => submitFuture(path, body, key), schema);
  }

  const session = createSessionResponseSchema.safeParse((await call('POST', 'create_session', createSessionBody(sdkVersion))).body);
  if (!session.success) throw new ClawrlError('upstream_error', `Tinker create_session: no session_id (${session.error.message})`);
  if (session.data.error !== null) throw new ClawrlError('configuration_error', `Tinker create_session: ${session.data.error}`);
  if (session.data.warning !== null) logger.warn('Tinker session warning', { message: session.data.warning });
  const { sessionId } = session.data;
  const heartbeat = setInterval(() => {
    send('POST', 'session_heartbeat', heartbeatBody(sessionId)).then(
      (answer) => {
        if (answer.status !== 200) logger.warn('Tinker heartbeat failed', { status: answer.status, detail: detailOf(answer.body) });
      },
      (error: unknown) => logger.warn('Tinker heartbeat failed', { error: String(error) }),
    );
  }, options.heartbeatIntervalMs ?? 10_000);
  heartbeat.unref();

  let nextModelSeqId = 0;
  let nextSamplingSessionSeqId = 0;
  const models = new Map<string, { nextSeqId: number; dispatched: Promise<unknown> }>();

  return {
    sessionId,
    async serverCapabilities() {
      const answer = await call('GET', 'get_server_capabilities');
      const parsed = serverCapabilitiesSchema.safeParse(answer.body);
      if (!parsed.success) throw new ClawrlError('upstream_error', `Tinker get_server_capabilities: ${parsed.error.message}`);
      return parsed.data;
    },
    async createModel(baseModel, rank) {
      const result = await request('create_model', createModelBody(sessionId, nextModelSeqId++, baseModel, rank), createModelResultSchema);
      // Training calls of a model count from 1 (the SDK's request counter + 1).
      models.set(result.modelId, { nextSeqId: 1, dispatched: Promise.resolve() });
      return result.modelId;
    },
    async submit(modelId, path, body, schema) {
      const model = models.get(modelId) ?? { nextSeqId: 1, dispatched: Promise.resolve() };
      models.set(modelId, model);
      const seqId = model.nextSeqId;
      model.nextSeqId += 1;
      const payload = body(seqId);
      const key = randomUUID();
      const accepted = model.dispatched.then(() => submitFuture(path, payload, key));
      model.dispatched = accepted.catch(() => undefined);
      return awaitFuture(path, await accepted, () => submitFuture(path, payload, key), schema);
    },
    async unloadModel(modelId) {
      models.delete(modelId);
      await request('unload_model', unloadModelBody(modelId), z.unknown());
    },
    async downloadCheckpointArchive(modelId, name) {
      for (let attempt = 0; ; attempt += 1) {
        let response: Response;
        try {
          response = await fetchFunction(`${base}/api/v1/training_runs/${encodeURIComponent(modelId)}/checkpoints/${encodeURIComponent(name)}/archive`, { headers: { 'X-API-Key': options.apiKey } });
        } catch (error) {
          if (attempt + 1 >= maxAttempts) throw new ClawrlError('upstream_error', `Tinker checkpoint archive: ${String(error)}`, { retryable: true });
          await sleep(delayOf(attempt));
          continue;
        }
        if (response.ok) return new Uint8Array(await response.arrayBuffer());
        const body: unknown = await response.json().catch(() => null);
        // 425: SkyRL's "still being created"; 5xx and 429 as everywhere.
        if ((response.status >= 500 || response.status === 429 || response.status === 425) && attempt + 1 < maxAttempts) {
          await sleep(delayOf(attempt));
          continue;
        }
        throw clientErrorOf('checkpoint archive', { status: response.status, body });
      }
    },
    async createSamplingSession(source) {
      const answer = await call('POST', 'create_sampling_session', createSamplingSessionBody(sessionId, nextSamplingSessionSeqId++, source));
      // The SDK gets the id at once; a server that answers with a future is waited for.
      const direct = samplingSessionResultSchema.safeParse(answer.body);
      let id: string;
      if (direct.success) id = direct.data.samplingSessionId;
      else {
        const future = futureResponseSchema.safeParse(answer.body);
        if (!future.success) throw new ClawrlError('upstream_error', `Tinker create_sampling_session: no sampling_session_id in ${JSON.stringify(answer.body).slice(0, 200)}`);
        id = (await awaitFuture('create_sampling_session', future.data.requestId, () => Promise.reject(new ClawrlError('upstream_error', 'a sampling session expired before it was read')), samplingSessionResultSchema)).samplingSessionId;
      }
      models.set(id, { nextSeqId: 0, dispatched: Promise.resolve() });
      return id;
    },
    async close() {
      closed = true;
      clearInterval(heartbeat);
    },
  };
}
