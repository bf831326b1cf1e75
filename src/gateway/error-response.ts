/**
 * The one place where errors become OpenAI-style HTTP bodies: `{error:{message,type,code,param}}`.
 * Internal details of unexpected errors never reach the wire; they are logged instead.
 */
import { ClawrlError, type ClawrlErrorCode } from '../spec/clawrl-error.js';
import type { Logger } from '../spec/logger.js';

export interface WireError {
  error: { message: string; type: string; code: string; param: string | null };
}

const typeByCode: Partial<Record<ClawrlErrorCode, string>> = {
  invalid_api_key: 'authentication_error',
  permission_denied: 'permission_error',
  not_found: 'not_found_error',
  rate_limited: 'rate_limit_error',
  upstream_error: 'api_error',
  upstream_timeout: 'api_error',
  internal_error: 'api_error',
  store_error: 'api_error',
  configuration_error: 'api_error',
};

export function wireErrorOf(error: ClawrlError): WireError {
  return {
    error: {
      message: error.message,
      type: typeByCode[error.code] ?? 'invalid_request_error',
      code: error.code,
      param: error.param ?? null,
    },
  };
}

/** Turns anything thrown into a `ClawrlError`; unknown errors become `internal_error` and are logged. */
export function asClawrlError(error: unknown, logger: Logger): ClawrlError {
  if (ClawrlError.isInstance(error)) return error;
  logger.error('unexpected error', { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  return new ClawrlError('internal_error', 'The server had an internal error while processing the request.', {
    cause: error,
  });
}

export function errorResponse(error: ClawrlError, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(wireErrorOf(error)), {
    status: error.status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}
