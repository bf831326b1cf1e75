/**
 * What a Tinker call sends as `X-API-Key`. Where the server's `/api/v1/client/config` answers
 * `pjwt_auth_enabled`, the SDK trades the `tml-` key at `/api/v1/auth/token` for a short-lived JWT
 * and sends that JWT, in the same `X-API-Key` header, on every other call (tinker
 * `lib/internal_client_holder.py`, `lib/_jwt_auth.py`, `lib/_auth_token_provider.py`); a server
 * that has it on rejects the raw key. Without the flag (SkyRL, older servers) the key itself is sent.
 *
 * The JWT is renewed on demand before it expires: once less than five minutes of it are left (the
 * SDK's background refresh point), or half its life for a token shorter than ten minutes. A failed
 * renewal keeps the current token while it is still valid, as the SDK does.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';

export interface TinkerCredentials {
  /** The value of `X-API-Key` for the next call. */
  apiKeyHeader(): Promise<string>;
  /** Whether a token exchange is in use (for messages). */
  readonly exchangesTokens: boolean;
}

export interface TinkerCredentialsOptions {
  apiKey: string;
  /** The server's `pjwt_auth_enabled`. */
  exchangeTokens: boolean;
  /** POSTs `/api/v1/auth/token` with the raw key and returns the JWT. */
  exchange: () => Promise<string>;
  logger: Logger;
  /** Milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
}

const refreshBeforeExpiryMs = 300_000;

/** The `exp` claim of a JWT in milliseconds, or null when it has none readable. */
export function jwtExpiryMs(jwt: string): number | null {
  const payload = jwt.split('.')[1];
  if (payload === undefined) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : null;
  } catch {
    return null;
  }
}

export function createTinkerCredentials(options: TinkerCredentialsOptions): TinkerCredentials {
  const now = options.now ?? Date.now;
  let token: { jwt: string; expiresAt: number | null; renewAt: number } | null = null;
  let renewing: Promise<string> | null = null;

  async function renew(): Promise<string> {
    const fetchedAt = now();
    const jwt = await options.exchange();
    const expiresAt = jwtExpiryMs(jwt);
    // A token without a readable expiry is used for a minute, then traded again.
    const life = expiresAt === null ? 60_000 : Math.max(0, expiresAt - fetchedAt);
    token = { jwt, expiresAt, renewAt: fetchedAt + life - Math.min(refreshBeforeExpiryMs, life / 2) };
    return jwt;
  }

  return {
    exchangesTokens: options.exchangeTokens,
    async apiKeyHeader() {
      if (!options.exchangeTokens) return options.apiKey;
      if (token !== null && now() < token.renewAt) return token.jwt;
      renewing ??= renew().finally(() => {
        renewing = null;
      });
      try {
        return await renewing;
      } catch (error) {
        const current: { jwt: string; expiresAt: number | null } | null = token;
        if (current !== null && current.expiresAt !== null && now() < current.expiresAt) {
          options.logger.warn('renewing the Tinker token failed; the current one is still valid', { error: String(error) });
          return current.jwt;
        }
        if (ClawrlError.isInstance(error)) throw error;
        throw new ClawrlError('upstream_error', `Tinker auth/token: ${error instanceof Error ? error.message : String(error)}`, { retryable: true, cause: error });
      }
    },
  };
}
