/**
 * The manager's two calls to the gateway: post an appraisal as feedback (`POST /v1/feedback`),
 * and ask whether a turn already has feedback (`GET /admin/turns/{id}`), which is what makes a
 * redelivered result harmless when an earlier manager posted its appraisal and died before the ack.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { RolloutFeedback } from '../rollout-client.js';

export interface GatewayFeedbackClientOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8400`. */
  url: string;
  /** Sent on `/v1/feedback` (a tenant key, or the admin key). */
  apiKey?: string | undefined;
  /** Sent on `/admin/turns/{id}`; without admin keys the gateway serves it to loopback clients. */
  adminKey?: string | undefined;
  timeoutMs?: number;
}

export interface FeedbackPost {
  turnId: string;
  text: string | null;
  /** The reward and where it came from, stored with the feedback so the turn's sample says it is a rollout's. */
  rollout: NonNullable<RolloutFeedback['rollout']>;
}

export interface GatewayFeedbackClient {
  /** Resolves with the feedback record's id; rejects with a `ClawrlError` (`not_found` for an unknown turn, retryable when the gateway is down). */
  postFeedback(feedback: FeedbackPost): Promise<number>;
  /** How many feedback records the turn has; rejects with `not_found` for an unknown turn. */
  feedbackCount(turnId: string): Promise<number>;
}

export function createGatewayFeedbackClient(options: GatewayFeedbackClientOptions): GatewayFeedbackClient {
  const timeoutMs = options.timeoutMs ?? 30_000;

  async function call(route: string, init: { method: 'GET' | 'POST'; key: string | undefined; body?: unknown }): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(new URL(route, options.url), {
        method: init.method,
        headers: {
          ...(init.key === undefined ? {} : { authorization: `Bearer ${init.key}` }),
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new ClawrlError('upstream_error', `cannot reach clawrl at ${options.url}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
        retryable: true,
      });
    }
    const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
    if (response.ok && body !== null) return body;
    const message = (body?.['error'] as { message?: string } | undefined)?.message ?? `HTTP ${response.status}`;
    if (response.status === 404) throw new ClawrlError('not_found', `clawrl at ${options.url} answered ${route}: ${message}`);
    if (response.status === 401 || response.status === 403) {
      throw new ClawrlError('configuration_error', `clawrl at ${options.url} refused ${route} (${message}): check --api-key / --admin-key`);
    }
    throw new ClawrlError('upstream_error', `clawrl at ${options.url} answered ${route}: ${message}`, { retryable: response.status >= 500 || response.status === 429 });
  }

  return {
    async postFeedback(feedback) {
      const body = await call('/v1/feedback', {
        method: 'POST',
        key: options.apiKey ?? options.adminKey,
        body: { turn_id: feedback.turnId, ...(feedback.text === null ? {} : { text: feedback.text }), rollout: feedback.rollout },
      });
      return Number(body['id']);
    },
    async feedbackCount(turnId) {
      const body = await call(`/admin/turns/${encodeURIComponent(turnId)}`, { method: 'GET', key: options.adminKey });
      const feedback = body['feedback'];
      return Array.isArray(feedback) ? feedback.length : 0;
    },
  };
}
