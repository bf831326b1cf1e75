/**
 * The one error base of clawrl. Every error the project throws on purpose is a `ClawrlError` with
 * a stable `code`; the gateway maps it to an OpenAI-style body in exactly one place.
 * `isInstance` works across duplicated module copies (worker threads, bundled tests) where
 * `instanceof` would not.
 */
const marker = Symbol.for('clawrl.error');

/** Stable, documented error codes. The HTTP status of each is fixed by `statusOfErrorCode`. */
export type ClawrlErrorCode =
  | 'invalid_request' // malformed JSON, schema violations, bad option values
  | 'invalid_api_key' // missing or unknown API key
  | 'permission_denied' // a tenant key used on an admin route
  | 'not_found' // unknown model, turn, session, policy version or route
  | 'request_too_large' // body over the configured limit
  | 'context_length_exceeded' // prompt plus max tokens does not fit the model
  | 'rate_limited' // per-key concurrency limit reached
  | 'upstream_error' // the inference engine failed or answered nonsense
  | 'upstream_timeout' // the inference engine did not answer in time
  | 'configuration_error' // bad configuration at start-up
  | 'unsupported' // a feature this adapter cannot provide
  | 'store_error' // the record store failed
  | 'internal_error'; // a bug

const statusByCode: Record<ClawrlErrorCode, number> = {
  invalid_request: 400,
  context_length_exceeded: 400,
  invalid_api_key: 401,
  permission_denied: 403,
  not_found: 404,
  request_too_large: 413,
  rate_limited: 429,
  unsupported: 400,
  upstream_error: 502,
  upstream_timeout: 504,
  configuration_error: 500,
  store_error: 500,
  internal_error: 500,
};

export function statusOfErrorCode(code: ClawrlErrorCode): number {
  return statusByCode[code];
}

export interface ClawrlErrorOptions {
  cause?: unknown;
  /** The request field or option the error is about (OpenAI's `param`). */
  param?: string;
  /** Whether retrying the same call may succeed (timeouts, 429, 5xx upstream). */
  retryable?: boolean;
}

export class ClawrlError extends Error {
  readonly [marker] = true;
  readonly code: ClawrlErrorCode;
  readonly param: string | undefined;
  readonly retryable: boolean;

  constructor(code: ClawrlErrorCode, message: string, options: ClawrlErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ClawrlError';
    this.code = code;
    this.param = options.param;
    this.retryable = options.retryable ?? (code === 'upstream_timeout' || code === 'rate_limited');
  }

  get status(): number {
    return statusOfErrorCode(this.code);
  }

  static isInstance(error: unknown): error is ClawrlError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}
