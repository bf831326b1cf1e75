/**
 * API keys: tenants' keys and one admin key, kept only as SHA-256 digests and compared in
 * constant time, so neither a memory dump nor response timing reveals a key.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ClawrlError } from '../spec/clawrl-error.js';

export interface ApiKeyEntry {
  /** Tenant name recorded on sessions and turns. */
  tenant: string;
  key: string;
}

export type Principal = { kind: 'anonymous' } | { kind: 'tenant'; tenant: string } | { kind: 'admin' };

/** What the gateway's Hono app keeps per request: who is asking. */
export interface GatewayVariables {
  principal: Principal;
}

export interface ApiKeyAuthenticator {
  /** True when no key is configured: the server then binds loopback only. */
  readonly open: boolean;
  /** Resolves the `Authorization` header; throws `invalid_api_key` for a missing or unknown key. */
  authenticate(authorization: string | undefined): Principal;
  /** Throws unless the principal may use admin routes. */
  requireAdmin(principal: Principal): void;
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/**
 * `--api-key` values are `tenant=key` or a bare key (the tenant is then named after the key's
 * digest, so it is stable without being the secret).
 */
export function parseApiKeyEntry(value: string): ApiKeyEntry {
  const separator = value.indexOf('=');
  if (separator > 0) return { tenant: value.slice(0, separator), key: value.slice(separator + 1) };
  return { tenant: `key-${digest(value).toString('hex').slice(0, 8)}`, key: value };
}

export function createApiKeyAuthenticator(options: { apiKeys: ApiKeyEntry[]; adminKey?: string }): ApiKeyAuthenticator {
  const tenants = options.apiKeys.map((entry) => ({ tenant: entry.tenant, digest: digest(entry.key) }));
  const adminDigest = options.adminKey === undefined ? undefined : digest(options.adminKey);
  const open = tenants.length === 0 && adminDigest === undefined;

  return {
    open,
    authenticate(authorization) {
      if (open) return { kind: 'anonymous' };
      const match = /^Bearer\s+(.+)$/i.exec(authorization?.trim() ?? '');
      if (!match?.[1]) {
        throw new ClawrlError('invalid_api_key', 'Missing API key: send "Authorization: Bearer <key>".');
      }
      const presented = digest(match[1].trim());
      // Compare against every key so the time taken does not depend on which one matched.
      let principal: Principal | undefined;
      if (adminDigest !== undefined && timingSafeEqual(presented, adminDigest)) principal = { kind: 'admin' };
      for (const entry of tenants) {
        if (timingSafeEqual(presented, entry.digest) && principal === undefined) {
          principal = { kind: 'tenant', tenant: entry.tenant };
        }
      }
      if (principal === undefined) throw new ClawrlError('invalid_api_key', 'Incorrect API key provided.');
      return principal;
    },
    requireAdmin(principal) {
      if (principal.kind === 'admin' || principal.kind === 'anonymous') return;
      throw new ClawrlError('permission_denied', 'This route needs the admin key.');
    },
  };
}

/**
 * Whose records a principal may read: a tenant reads only its own (its sessions, turns and
 * feedback); the admin key, and everyone on a server without keys, read all (undefined).
 */
export function readScopeOf(principal: Principal): string | undefined {
  return principal.kind === 'tenant' ? principal.tenant : undefined;
}

export function tenantOf(principal: Principal): string | null {
  if (principal.kind === 'tenant') return principal.tenant;
  return principal.kind === 'admin' ? 'admin' : null;
}
