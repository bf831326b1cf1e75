import { describe, expect, it } from 'vitest';
import { resolveServerUrl } from './resolve-server-url.js';

describe('resolveServerUrl', () => {
  it('defaults to where the server listens by default', () => {
    expect(resolveServerUrl({ flagUrl: undefined, file: {}, environment: {} })).toBe('http://127.0.0.1:8400');
  });

  it('reads CLAWRL_HOST and CLAWRL_PORT, as the server does', () => {
    expect(resolveServerUrl({ flagUrl: undefined, file: {}, environment: { CLAWRL_PORT: '23817' } })).toBe('http://127.0.0.1:23817');
    expect(resolveServerUrl({ flagUrl: undefined, file: {}, environment: { CLAWRL_HOST: 'gpu-box', CLAWRL_PORT: '9000' } })).toBe('http://gpu-box:9000');
  });

  it('reads the config file host and port before the environment, as the server does', () => {
    expect(resolveServerUrl({ flagUrl: undefined, file: { host: 'from-file', port: 9100 }, environment: { CLAWRL_HOST: 'from-env', CLAWRL_PORT: '9000' } })).toBe(
      'http://from-file:9100',
    );
  });

  it('reaches a server bound to every interface on loopback, and brackets IPv6', () => {
    expect(resolveServerUrl({ flagUrl: undefined, file: {}, environment: { CLAWRL_HOST: '0.0.0.0', CLAWRL_PORT: '9000' } })).toBe('http://127.0.0.1:9000');
    expect(resolveServerUrl({ flagUrl: undefined, file: {}, environment: { CLAWRL_HOST: '::' } })).toBe('http://[::1]:8400');
    expect(resolveServerUrl({ flagUrl: undefined, file: {}, environment: { CLAWRL_HOST: 'fd00::5' } })).toBe('http://[fd00::5]:8400');
  });

  it('lets a URL win: --url, then the config file url, then CLAWRL_URL', () => {
    const environment = { CLAWRL_URL: 'http://from-env:1', CLAWRL_PORT: '9000' };
    expect(resolveServerUrl({ flagUrl: 'http://from-flag:3', file: { url: 'http://from-file:2' }, environment })).toBe('http://from-flag:3');
    expect(resolveServerUrl({ flagUrl: undefined, file: { url: 'http://from-file:2' }, environment })).toBe('http://from-file:2');
    expect(resolveServerUrl({ flagUrl: undefined, file: {}, environment })).toBe('http://from-env:1');
  });

  it('refuses a port no client can reach, naming where it came from', () => {
    expect(() => resolveServerUrl({ flagUrl: undefined, file: {}, environment: { CLAWRL_PORT: '0' } })).toThrow(/CLAWRL_PORT must be a port from 1 to 65535/);
    expect(() => resolveServerUrl({ flagUrl: undefined, file: { port: 'abc' }, environment: {} })).toThrow(/config file's port/);
  });
});
