import { describe, expect, it } from 'vitest';
import { createApiKeyAuthenticator, parseApiKeyEntry } from './api-key-authenticator.js';

describe('parseApiKeyEntry', () => {
  it('reads a user inside a tenant, a tenant\'s one user, and a bare key', () => {
    expect(parseApiKeyEntry('acme/alice=sk-alice-1')).toEqual({ tenant: 'acme', user: 'acme/alice', key: 'sk-alice-1' });
    expect(parseApiKeyEntry('acme=sk-acme-123')).toEqual({ tenant: 'acme', user: 'acme', key: 'sk-acme-123' });
    const bare = parseApiKeyEntry('sk-bare-key-1');
    expect(bare.tenant).toMatch(/^key-[0-9a-f]{8}$/);
    expect(bare.user).toBe(bare.tenant);
    // The key itself may hold '=' and '/'.
    expect(parseApiKeyEntry('acme/bob=a/b=c')).toMatchObject({ user: 'acme/bob', key: 'a/b=c' });
  });

  it('refuses names that are not names, and a second /', () => {
    expect(() => parseApiKeyEntry('acme/alice/x=sk-123456')).toThrow(/more than one '\/'/);
    expect(() => parseApiKeyEntry('acme/=sk-1234567')).toThrow(/user '' is not a name/);
    expect(() => parseApiKeyEntry('ac me=sk-1234567')).toThrow(/tenant 'ac me' is not a name/);
  });
});

describe('the request\'s user', () => {
  const keys = [parseApiKeyEntry('acme/alice=alice-key-1'), parseApiKeyEntry('acme=acme-proxy-key'), parseApiKeyEntry('other=other-key-12')];
  const bearer = (key: string) => `Bearer ${key}`;

  it('is the key\'s, and a client\'s header names no one unless the operator trusts that header', () => {
    const authenticator = createApiKeyAuthenticator({ apiKeys: keys, adminKey: 'admin-key-123' });
    expect(authenticator.authenticate(bearer('alice-key-1'), 'mallory')).toEqual({ kind: 'tenant', tenant: 'acme', user: 'acme/alice' });
    expect(authenticator.authenticate(bearer('acme-proxy-key'))).toEqual({ kind: 'tenant', tenant: 'acme', user: 'acme' });
    expect(authenticator.authenticate(bearer('admin-key-123'))).toEqual({ kind: 'admin', user: null });
  });

  it('comes from the trusted header inside the key\'s tenant, so one tenant\'s proxy cannot name another\'s user', () => {
    const authenticator = createApiKeyAuthenticator({ apiKeys: keys, trustedUserHeader: 'X-Forwarded-User' });
    expect(authenticator.trustedUserHeader).toBe('x-forwarded-user');
    expect(authenticator.authenticate(bearer('acme-proxy-key'), 'bob')).toMatchObject({ tenant: 'acme', user: 'acme/bob' });
    expect(authenticator.authenticate(bearer('other-key-12'), 'bob')).toMatchObject({ tenant: 'other', user: 'other/bob' });
    // No header: the key's own user.
    expect(authenticator.authenticate(bearer('other-key-12'), undefined)).toMatchObject({ user: 'other' });
    expect(() => authenticator.authenticate(bearer('other-key-12'), 'acme/alice')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    // Without keys (loopback only) the proxy's name stands alone.
    expect(createApiKeyAuthenticator({ apiKeys: [], trustedUserHeader: 'x-user' }).authenticate(undefined, 'carol')).toEqual({ kind: 'anonymous', user: 'carol' });
    expect(createApiKeyAuthenticator({ apiKeys: [] }).authenticate(undefined, 'carol')).toEqual({ kind: 'anonymous', user: null });
  });
});
