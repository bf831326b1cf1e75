/**
 * API keys: tenants' keys and one admin key, kept only as SHA-256 digests and compared in
 * constant time, so neither a memory dump nor response timing reveals a key.
 *
 * Who a request's user is comes from its credentials alone: a key names a user inside its tenant
 * (`tenant/user=key`; a `tenant=key` names the tenant's one user, the tenant itself), and a front
 * proxy that authenticates people may name them in a header only when the operator configured
 * that header (`--trusted-user-header`); the user is then qualified by the key's tenant, so one
 * tenant's proxy can never name another tenant's user. Users are written `tenant/name`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ClawrlError } from '../spec/clawrl-error.js';

export interface ApiKeyEntry {
  /** Tenant name recorded on sessions and turns. */
  tenant: string;
  /** The user the key names, `tenant/name`; absent, the tenant's one user (the tenant itself). */
  user?: string;
  key: string;
}

/** Each principal carries its user: the key's, a trusted proxy's, or null (no key, no header). */
export type Principal =
  | { kind: 'anonymous'; user: string | null }
  | { kind: 'tenant'; tenant: string; user: string }
  | { kind: 'admin'; user: string | null };

/** What the gateway's Hono app keeps per request: who is asking. */
export interface GatewayVariables {
  principal: Principal;
}

export interface ApiKeyAuthenticator {
  /** True when no key is configured: the server then binds loopback only. */
  readonly open: boolean;
  /** The header a trusted front proxy names the user in (lower case), when configured. */
  readonly trustedUserHeader: string | undefined;
  /**
   * Resolves the `Authorization` header (and the trusted user header's value, read only when
   * configured); throws `invalid_api_key` for a missing or unknown key, `invalid_request` for a user
   * name that is not one.
   */
  authenticate(authorization: string | undefined, trustedUser?: string): Principal;
  /** Throws unless the principal may use admin routes. */
  requireAdmin(principal: Principal): void;
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** A tenant's or a user's name: letters, digits and `._@+-`, so a name never holds the `/` between them. */
const namePattern = /^[A-Za-z0-9._@+-]{1,128}$/;

/** Whether `user` is one a request could have: `tenant/name`, or a tenant's (or a trusted proxy's, without keys) one name. */
export function isUserName(user: string): boolean {
  const [first = '', second, ...rest] = user.split('/');
  return rest.length === 0 && namePattern.test(first) && (second === undefined || namePattern.test(second));
}

function checkName(name: string, what: string): string {
  if (!namePattern.test(name)) throw new ClawrlError('invalid_request', `The ${what} '${name.slice(0, 140)}' is not a name: use 1 to 128 letters, digits or ._@+- characters.`);
  return name;
}

/**
 * `--api-key` values are `tenant/user=key`, `tenant=key` or a bare key (the tenant is then named
 * after the key's digest, so it is stable without being the secret).
 */
export function parseApiKeyEntry(value: string): ApiKeyEntry {
  const separator = value.indexOf('=');
  if (separator <= 0) {
    const tenant = `key-${digest(value).toString('hex').slice(0, 8)}`;
    return { tenant, user: tenant, key: value };
  }
  const key = value.slice(separator + 1);
  const [tenant = '', name, ...rest] = value.slice(0, separator).split('/');
  if (rest.length > 0) throw new ClawrlError('invalid_request', `The API key name '${value.slice(0, separator)}' has more than one '/': write tenant=key or tenant/user=key.`);
  checkName(tenant, 'tenant');
  return { tenant, user: name === undefined ? tenant : `${tenant}/${checkName(name, 'user')}`, key };
}

/** The user a trusted proxy names, inside the key's tenant when there is one. */
function trustedUserOf(tenant: string | null, name: string): string {
  checkName(name, 'user');
  return tenant === null ? name : `${tenant}/${name}`;
}

export function createApiKeyAuthenticator(options: { apiKeys: ApiKeyEntry[]; adminKey?: string; trustedUserHeader?: string }): ApiKeyAuthenticator {
  const tenants = options.apiKeys.map((entry) => ({ tenant: entry.tenant, user: entry.user ?? entry.tenant, digest: digest(entry.key) }));
  const adminDigest = options.adminKey === undefined ? undefined : digest(options.adminKey);
  const open = tenants.length === 0 && adminDigest === undefined;
  const trustedUserHeader = options.trustedUserHeader?.toLowerCase();
  const trusted = (principal: Principal, name: string | undefined): Principal => {
    if (trustedUserHeader === undefined || name === undefined || name.trim() === '') return principal;
    return { ...principal, user: trustedUserOf(tenantOf(principal), name.trim()) };
  };

  return {
    open,
    trustedUserHeader,
    authenticate(authorization, trustedUser) {
      if (open) return trusted({ kind: 'anonymous', user: null }, trustedUser);
      const match = /^Bearer\s+(.+)$/i.exec(authorization?.trim() ?? '');
      if (!match?.[1]) {
        throw new ClawrlError('invalid_api_key', 'Missing API key: send "Authorization: Bearer <key>".');
      }
      const presented = digest(match[1].trim());
      // Compare against every key so the time taken does not depend on which one matched.
      let principal: Principal | undefined;
      if (adminDigest !== undefined && timingSafeEqual(presented, adminDigest)) principal = { kind: 'admin', user: null };
      for (const entry of tenants) {
        if (timingSafeEqual(presented, entry.digest) && principal === undefined) {
          principal = { kind: 'tenant', tenant: entry.tenant, user: entry.user };
        }
      }
      if (principal === undefined) throw new ClawrlError('invalid_api_key', 'Incorrect API key provided.');
      return trusted(principal, trustedUser);
    },
    requireAdmin(principal) {
      if (principal.kind === 'admin' || principal.kind === 'anonymous') return;
      throw new ClawrlError('permission_denied', 'This route needs the admin key.');
    },
  };
}

/** The records a tenant's key may read: its tenant's, and only its user's when it names one. */
export interface ReadScope {
  tenant: string;
  user?: string;
}

/**
 * Whose records a principal may read: a tenant's key reads only its tenant's (its sessions, turns
 * and feedback); a key that names a user of its tenant (`tenant/user=key`, or a person a trusted
 * proxy names) only that user's, since a tenant's one key speaks for all its users but a user only
 * for themself; the admin key, and everyone on a server without keys, read all (undefined).
 */
export function readScopeOf(principal: Principal): ReadScope | undefined {
  if (principal.kind !== 'tenant') return undefined;
  return principal.user === principal.tenant ? { tenant: principal.tenant } : { tenant: principal.tenant, user: principal.user };
}

/** Whether a record (a session, a turn) is one the scope may read. */
export function inReadScope(scope: ReadScope | undefined, record: { tenant: string | null; user: string | null }): boolean {
  return scope === undefined || (record.tenant === scope.tenant && (scope.user === undefined || record.user === scope.user));
}

export function tenantOf(principal: Principal): string | null {
  if (principal.kind === 'tenant') return principal.tenant;
  return principal.kind === 'admin' ? 'admin' : null;
}
