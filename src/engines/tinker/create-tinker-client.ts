/**
 * A JSON client of the Tinker HTTP API (`engines.md` §5.1–5.3): one session with a heartbeat, and
 * model-scoped calls that take the model's next `seq_id` and are dispatched strictly in that
 * order (the service applies a model's requests in `seq_id` order, so a call is only sent once
 * every earlier call of the model was accepted; results are then awaited concurrently). A seq_id is
 * taken when its call is dispatched and kept only if the service did not refuse the call with a
 * 4xx, so a refused call (a route the server lacks) leaves no gap the service would wait on.
 *
 * Start-up follows the SDK: `/api/v1/client/config` first, with the key; where it answers
 * `pjwt_auth_enabled` the key is traded for a JWT (`create-tinker-credentials.ts`). Its chunk limits
 * are passed on to the training engine (`limits`).
 *
 * Futures are polled through `retrieve_future` as the SDK polls them (`lib/api_future_impl.py`):
 * 408, `{type: "try_again"}` or a poll that outlived `pollTimeoutMs` (60 s; SkyRL holds a poll for
 * 300 s, longer than fetch waits for headers) mean not ready, poll again, and count as no failed
 * try; 410 means the promise expired, so the same request (same `seq_id` and `X-Idempotency-Key`)
 * is submitted again; a bare 400 is polled again up to 3 times (it may come from a proxy; SkyRL
 * also reports a failed request so, and then its `detail` is the error); 5xx, 429 and connection
 * errors are retried with exponential back-off up to `maxAttempts`; a failed request
 * (`{error, category}`) and any other 4xx fail at once, since sending them again cannot succeed.
 */
import { retryDelayMs } from '../../core/retry-delay.js';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { silentLogger, type Logger } from '../../spec/logger.js';
import { createTinkerCredentials, type TinkerCredentials } from './create-tinker-credentials.js';
import { downloadCheckpointArchive, type ArchiveRetryOptions } from './download-checkpoint-archive.js';
import {
  authTokenResponseSchema,
  clientConfigBody,
  clientConfigResponseSchema,
  createModelBody,
  createModelResultSchema,
  createSessionBody,
  createSessionResponseSchema,
  futureResponseSchema,
  heartbeatBody,
  requestFailedSchema,
  retrieveFutureBody,
  createSamplingSessionBody,
  samplingSessionResultSchema,
  serverCapabilitiesSchema,
  tryAgainSchema,
  unloadModelBody,
} from './tinker-api.js';
import { bodyOf, clientErrorOf, detailOf, type HttpAnswer } from './tinker-http-errors.js';

export interface TinkerRetryOptions {
  /** First back-off delay; doubles up to `maxDelayMs`. Default 250 ms. */
  initialDelayMs?: number;
  /** Default 10 s. */
  maxDelayMs?: number;
  /** Tries of one HTTP call on 5xx, 429 or a connection error (and resubmissions after 410). Default 8. */
  maxAttempts?: number;
  /** How long one `retrieve_future` poll may take before it is dropped and sent again. Default 60 s. */
  pollTimeoutMs?: number;
  /** The archive route's waits for a checkpoint not ready yet (503, 425). */
  archive?: ArchiveRetryOptions;
}

export interface TinkerClientOptions {
  /** The service's base URL, e.g. `https://tinker.thinkingmachines.dev/services/tinker-prod` or SkyRL's `http://localhost:8000`. */
  url: string;
  /** The `tml-` key: sent as `X-API-Key`, or traded for a JWT sent there where the server asks for it. */
  apiKey: string;
  /** Default 10 s, as the SDK. */
  heartbeatIntervalMs?: number;
  retry?: TinkerRetryOptions;
  logger?: Logger;
  fetch?: typeof fetch;
}

export type TinkerServerCapabilities = z.output<typeof serverCapabilitiesSchema>;

/** How large one `forward_backward` may be, where the server says (`fwdbwd_max_chunk_len`, `fwdbwd_max_chunk_bytes_count`). */
export interface TinkerRequestLimits {
  maxChunkDatums: number | null;
  maxChunkBytes: number | null;
}

export interface TinkerClient {
  readonly sessionId: string;
  readonly limits: TinkerRequestLimits;
  serverCapabilities(): Promise<TinkerServerCapabilities>;
  /** A LoRA training client of `baseModel`; resolves with its `model_id`. */
  createModel(baseModel: string, rank: number): Promise<string>;
  /**
   * A model-scoped call to `/api/v1/<path>` with the model's next `seq_id`, sent after every
   * earlier call of the model was accepted; resolves with the future's result parsed by `schema`.
   */
  submit<Result>(modelId: string, path: string, body: (seqId: number) => object, schema: z.ZodType<Result>): Promise<Result>;
  unloadModel(modelId: string): Promise<void>;
  /** The archive (a tar, gzipped or not) of saved sampler weights `name` of `modelId` (`download-checkpoint-archive.ts`). */
  downloadCheckpointArchive(modelId: string, name: string): Promise<Uint8Array>;
  /**
   * A sampling session of the base model or of saved sampler weights; its `asample` calls go
   * through `submit` with its id, counting `seq_id` from 0 (the SDK's sampling counter).
   */
  createSamplingSession(source: { baseModel: string } | { modelPath: string }): Promise<string>;
  /** Stops the heartbeat. Idempotent. */
  close(): Promise<void>;
}

/**
 * The SDK release whose protocol this client speaks: 0.22.3 was the last to send `forward_backward`
 * and `forward` as JSON and read JSON results (0.25 sends protobuf). The server resolves its flags
 * by this version (`types/client_config_request.py`).
 */
const sdkVersion = '0.22.3';
/** Bare 400s a poll is repeated for, as the SDK's `_MAX_BAD_REQUEST_RETRIES`. */
const badRequestRetries = 3;

class RetryableFailure extends Error {}
/** A poll that took longer than `pollTimeoutMs`: not a failure, only a poll to send again. */
class PollTimeout extends Error {}

export async function createTinkerClient(options: TinkerClientOptions): Promise<TinkerClient> {
  const base = options.url.replace(/\/+$/, '');
  const fetchFunction = options.fetch ?? fetch;
  const logger = options.logger ?? silentLogger;
  const initialDelayMs = options.retry?.initialDelayMs ?? 250;
  const maxDelayMs = options.retry?.maxDelayMs ?? 10_000;
  const maxAttempts = options.retry?.maxAttempts ?? 8;
  const pollTimeoutMs = options.retry?.pollTimeoutMs ?? 60_000;
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const delayOf = (attempt: number) => retryDelayMs(attempt + 1, { initialMs: initialDelayMs, maxMs: maxDelayMs });
  let closed = false;
  const rawKey = async () => options.apiKey;
  // Until the server's config is read, calls carry the key itself.
  let credentials: TinkerCredentials = { exchangesTokens: false, apiKeyHeader: rawKey };

  interface SendOptions {
    idempotencyKey?: string;
    /** Drop the call after this long with a `PollTimeout`. */
    timeoutMs?: number;
    /** What to send as `X-API-Key`; default the current credentials. */
    apiKeyHeader?: () => Promise<string>;
  }

  async function send(method: 'GET' | 'POST', path: string, body: object | undefined, sendOptions: SendOptions = {}): Promise<HttpAnswer> {
    const signal = sendOptions.timeoutMs === undefined ? undefined : AbortSignal.timeout(sendOptions.timeoutMs);
    const timedOut = (error: unknown) => signal?.aborted === true && error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    let response: Response;
    try {
      response = await fetchFunction(`${base}/api/v1/${path}`, {
        method,
        headers: {
          'X-API-Key': await (sendOptions.apiKeyHeader ?? credentials.apiKeyHeader)(),
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...(sendOptions.idempotencyKey === undefined ? {} : { 'X-Idempotency-Key': sendOptions.idempotencyKey }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (timedOut(error)) throw new PollTimeout(`Tinker ${path}: no answer in ${sendOptions.timeoutMs} ms`);
      if (ClawrlError.isInstance(error)) throw error;
      throw new RetryableFailure(`Tinker ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    const parsed = await bodyOf(response);
    if (signal?.aborted === true && response.status === 200 && parsed === null) throw new PollTimeout(`Tinker ${path}: the answer was cut at ${sendOptions.timeoutMs} ms`);
    return { status: response.status, body: parsed };
  }

  /** One HTTP call, retried with back-off while the failure is transient; a poll timeout is sent again without counting. */
  async function call(method: 'GET' | 'POST', path: string, body?: object, sendOptions: SendOptions = {}, accept: (status: number) => boolean = (status) => status === 200): Promise<HttpAnswer> {
    let lastFailure = '';
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      if (attempt > 0) await sleep(delayOf(attempt - 1));
      if (closed) throw new ClawrlError('internal_error', 'the Tinker client is closed');
      try {
        const answer = await send(method, path, body, sendOptions);
        if (accept(answer.status)) return answer;
        if (answer.status >= 500 || answer.status === 429) {
          lastFailure = `HTTP ${answer.status}: ${detailOf(answer.body)}`;
          continue;
        }
        throw clientErrorOf(path, answer);
      } catch (error) {
        if (error instanceof PollTimeout) {
          attempt -= 1;
          continue;
        }
        if (!(error instanceof RetryableFailure)) throw error;
        lastFailure = error.message;
      }
    }
    throw new ClawrlError('upstream_error', `Tinker ${path} failed ${maxAttempts} times: ${lastFailure}`, { retryable: true });
  }

  async function submitFuture(path: string, body: object, idempotencyKey: string): Promise<string> {
    const answer = await call('POST', path, body, { idempotencyKey });
    const parsed = futureResponseSchema.safeParse(answer.body);
    if (!parsed.success) throw new ClawrlError('upstream_error', `Tinker ${path}: no request_id in ${JSON.stringify(answer.body).slice(0, 200)}`);
    return parsed.data.requestId;
  }

  async function awaitFuture<Result>(path: string, requestId: string, resubmit: () => Promise<string>, schema: z.ZodType<Result>): Promise<Result> {
    let current = requestId;
    let resubmissions = 0;
    let badRequests = 0;
    for (;;) {
      const answer = await call('POST', 'retrieve_future', retrieveFutureBody(current), { timeoutMs: pollTimeoutMs }, (status) => status === 200 || status === 408 || status === 410 || status === 400);
      // 408: the server held the poll until its own timeout; ask again at once.
      if (answer.status === 408) {
        badRequests = 0;
        continue;
      }
      if (answer.status === 410) {
        resubmissions += 1;
        if (resubmissions >= maxAttempts) throw new ClawrlError('upstream_error', `Tinker ${path}: the result expired ${resubmissions} times`, { retryable: true });
        logger.warn('a Tinker result expired before it was read; submitting the request again', { path, requestId: current });
        current = await resubmit();
        continue;
      }
      if (answer.status === 400) {
        if (badRequests < badRequestRetries) {
          badRequests += 1;
          await sleep(initialDelayMs);
          continue;
        }
        throw new ClawrlError('invalid_request', `Tinker ${path} failed: ${detailOf(answer.body)}`);
      }
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

  // Servers older than the config call (404) get what the SDK assumes without one.
  const configAnswer = await call('POST', 'client/config', clientConfigBody(sdkVersion), { apiKeyHeader: rawKey }, (status) => status === 200 || status === 404);
  const config = configAnswer.status === 404 ? null : clientConfigResponseSchema.safeParse(configAnswer.body);
  if (config !== null && !config.success) throw new ClawrlError('upstream_error', `Tinker client/config: ${config.error.message}`);
  const serverConfig = config?.data ?? { tokenExchange: false, maxChunkDatums: null, maxChunkBytes: null };
  credentials = createTinkerCredentials({
    apiKey: options.apiKey,
    exchangeTokens: serverConfig.tokenExchange,
    logger,
    exchange: async () => {
      const answer = await call('POST', 'auth/token', {}, { apiKeyHeader: rawKey });
      const parsed = authTokenResponseSchema.safeParse(answer.body);
      if (!parsed.success) throw new ClawrlError('upstream_error', `Tinker auth/token: no jwt in ${JSON.stringify(answer.body).slice(0, 200)}`);
      return parsed.data.jwt;
    },
  });

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
    limits: { maxChunkDatums: serverConfig.maxChunkDatums, maxChunkBytes: serverConfig.maxChunkBytes },
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
      const key = randomUUID();
      const accepted = model.dispatched.then(async () => {
        const payload = body(model.nextSeqId);
        try {
          const requestId = await submitFuture(path, payload, key);
          model.nextSeqId += 1;
          return { requestId, payload };
        } catch (error) {
          // Refused outright (a 4xx) or never sent: the service never took this seq_id, so the next
          // call reuses it. An upstream_error (5xx to the end, or an answer without request_id) may
          // have been accepted unseen, and the seq_id stays spent.
          const refused = ClawrlError.isInstance(error) && error.code !== 'upstream_error';
          if (!refused) model.nextSeqId += 1;
          throw error;
        }
      });
      model.dispatched = accepted.catch(() => undefined);
      const { requestId, payload } = await accepted;
      return awaitFuture(path, requestId, () => submitFuture(path, payload, key), schema);
    },
    async unloadModel(modelId) {
      models.delete(modelId);
      await request('unload_model', unloadModelBody(modelId), z.unknown());
    },
    downloadCheckpointArchive: (modelId, name) =>
      downloadCheckpointArchive({ base, fetch: fetchFunction, apiKeyHeader: () => credentials.apiKeyHeader(), backoffMs: delayOf, sleep, ...(options.retry?.archive === undefined ? {} : { retry: options.retry.archive }) }, modelId, name),
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
