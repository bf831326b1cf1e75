import { describe, expect, it } from 'vitest';
import { consentDefaultsOf } from './start-gateway-service.js';

describe('consentDefaultsOf', () => {
  it('gives each named tenant its defaults, and refuses a tenant no API key names', () => {
    const apiKey = ['ci=ci-key-123', 'vault=vault-key-123'];
    expect(Object.fromEntries(consentDefaultsOf({ apiKey, keyConsent: ['ci=train-off', 'vault=record-off', 'admin=train-off'] }))).toEqual({
      ci: { train: false, record: true },
      vault: { train: true, record: false },
      admin: { train: false, record: true },
    });
    expect(() => consentDefaultsOf({ apiKey, keyConsent: ['cl=train-off'] })).toThrow(expect.objectContaining({ code: 'configuration_error', message: expect.stringContaining("'cl'") }));
    expect(consentDefaultsOf({ apiKey: [], keyConsent: [] }).size).toBe(0);
  });
});
