/**
 * One admin call of the client commands (`clawrl status`, `clawrl policy`) to a running server,
 * with failures said in one line: which URL was tried, why it failed, and how to point the
 * command elsewhere.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface ServerAdminCall {
  url: string;
  adminKey: string | undefined;
  route: string;
  method: 'GET' | 'POST';
  timeoutMs: number;
  /** Sent as JSON. */
  body?: unknown;
}

/** `fetch failed` says nothing; the cause's code (ECONNREFUSED, ENOTFOUND) says what happened. */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (cause?.code !== undefined) return cause.code;
  if ((error as Error | undefined)?.name === 'TimeoutError') return 'no answer in time';
  return cause?.message ?? (error as Error).message;
}

export async function callServerAdmin(call: ServerAdminCall): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(new URL(call.route, call.url), {
      method: call.method,
      headers: {
        ...(call.adminKey === undefined ? {} : { authorization: `Bearer ${call.adminKey}` }),
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
      signal: AbortSignal.timeout(call.timeoutMs),
    });
  } catch (error) {
    throw new ClawrlError(
      'upstream_error',
      `Cannot reach clawrl at ${call.url} (${reasonOf(error)}). Is it running (clawrl serve)? Point this command at it with --url or CLAWRL_URL, or the CLAWRL_HOST and CLAWRL_PORT the server uses.`,
      { cause: error },
    );
  }
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (!response.ok || body === null) {
    const message = (body?.error as { message?: string } | undefined)?.message ?? `HTTP ${response.status}`;
    throw new ClawrlError(response.status === 404 ? 'not_found' : 'upstream_error', `clawrl at ${call.url} answered: ${message}`);
  }
  return body;
}
