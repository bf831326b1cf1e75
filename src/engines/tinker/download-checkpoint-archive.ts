/**
 * The archive of saved sampler weights, fetched as the SDK fetches it (tinker
 * `resources/weights.py` `get_checkpoint_archive_url`, `types/checkpoint.py`):
 *
 * - `GET …/training_runs/<model>/checkpoints/sampler_weights/<name>/archive`, the checkpoint id
 *   being `sampler_weights/<name>` with its slash kept. SkyRL takes the bare `<name>` in one path
 *   segment (`skyrl/tinker/api.py` `ID_PATTERN`) and answers the SDK's form with 404, or 405 where
 *   its DELETE route's `{checkpoint_path:path}` matches it, so on either the bare form is tried.
 * - The answer is a 302 whose `Location` is a signed URL (taken with `redirect: 'manual'`), or a
 *   200 `{url, expires}`. The signed URL is fetched without `X-API-Key`: the key (or its JWT) is
 *   for the Tinker API, never for the storage host the URL points at.
 * - 503 (and SkyRL's 425, "still being created") is retried every 30 s up to 6 tries, as the SDK
 *   retries 503; other 5xx, 429 and dropped connections are retried with the client's back-off.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import { archiveUrlResponseSchema } from './tinker-api.js';
import { bodyOf, clientErrorOf, detailOf } from './tinker-http-errors.js';

export interface ArchiveRetryOptions {
  /** Wait after a 503 or 425; default 30 s, as the SDK. */
  notReadyDelayMs?: number;
  /** Tries of the archive route; default 6, as the SDK. */
  attempts?: number;
}

export interface DownloadCheckpointArchiveOptions {
  /** The service's base URL, without a trailing slash. */
  base: string;
  fetch: typeof fetch;
  apiKeyHeader: () => Promise<string>;
  /** Back-off before try `attempt + 1` (0-based) after a 5xx, 429 or dropped connection. */
  backoffMs: (attempt: number) => number;
  sleep: (ms: number) => Promise<void>;
  retry?: ArchiveRetryOptions;
}

type RouteAnswer = { kind: 'url'; url: string } | { kind: 'missing'; status: number; detail: string };

const redirects = new Set([301, 302, 303, 307, 308]);

export async function downloadCheckpointArchive(options: DownloadCheckpointArchiveOptions, modelId: string, name: string): Promise<Uint8Array> {
  const notReadyDelayMs = options.retry?.notReadyDelayMs ?? 30_000;
  const attempts = options.retry?.attempts ?? 6;
  const routeOf = (checkpoint: string[]) => `${options.base}/api/v1/training_runs/${encodeURIComponent(modelId)}/checkpoints/${checkpoint.map(encodeURIComponent).join('/')}/archive`;

  /** The signed URL behind one form of the route, or that the route does not know it. */
  async function signedUrlAt(route: string): Promise<RouteAnswer> {
    let lastFailure = '';
    for (let attempt = 0; attempt < attempts; attempt += 1) {
      let response: Response;
      try {
        response = await options.fetch(route, { headers: { 'X-API-Key': await options.apiKeyHeader(), Accept: 'application/json' }, redirect: 'manual' });
      } catch (error) {
        lastFailure = error instanceof Error ? error.message : String(error);
        await options.sleep(options.backoffMs(attempt));
        continue;
      }
      const location = response.headers.get('location');
      if (redirects.has(response.status) && location !== null) {
        await response.body?.cancel();
        return { kind: 'url', url: new URL(location, route).toString() };
      }
      const body = await bodyOf(response);
      if (response.status === 200) {
        const parsed = archiveUrlResponseSchema.safeParse(body);
        if (!parsed.success) throw new ClawrlError('upstream_error', `Tinker checkpoint archive: a 200 without {url}: ${JSON.stringify(body)?.slice(0, 200)}`);
        return { kind: 'url', url: parsed.data.url };
      }
      if (response.status === 404 || response.status === 405) return { kind: 'missing', status: response.status, detail: detailOf(body) };
      lastFailure = `HTTP ${response.status}: ${detailOf(body)}`;
      if (response.status === 503 || response.status === 425) await options.sleep(notReadyDelayMs);
      else if (response.status >= 500 || response.status === 429) await options.sleep(options.backoffMs(attempt));
      else throw clientErrorOf('checkpoint archive', { status: response.status, body });
    }
    throw new ClawrlError('upstream_error', `Tinker checkpoint archive of ${modelId}/${name} failed ${attempts} times: ${lastFailure}`, { retryable: true });
  }

  let answer = await signedUrlAt(routeOf(['sampler_weights', name]));
  if (answer.kind === 'missing') answer = await signedUrlAt(routeOf([name]));
  if (answer.kind === 'missing') throw clientErrorOf('checkpoint archive', { status: answer.status, body: { detail: `${answer.detail} (asked as sampler_weights/${name} and as ${name})` } });

  let lastFailure = '';
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    let response: Response;
    try {
      response = await options.fetch(answer.url);
    } catch (error) {
      lastFailure = error instanceof Error ? error.message : String(error);
      await options.sleep(options.backoffMs(attempt));
      continue;
    }
    if (response.ok) return new Uint8Array(await response.arrayBuffer());
    const body = await bodyOf(response);
    lastFailure = `HTTP ${response.status}: ${detailOf(body)}`;
    if (response.status < 500 && response.status !== 429) {
      throw new ClawrlError('upstream_error', `Tinker checkpoint archive: the signed URL refused the download (${lastFailure}); it may have expired`);
    }
    await options.sleep(options.backoffMs(attempt));
  }
  throw new ClawrlError('upstream_error', `Tinker checkpoint archive download failed ${attempts} times: ${lastFailure}`, { retryable: true });
}
