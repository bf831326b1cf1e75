/**
 * Where the client commands (`clawrl status`, `clawrl policy`) find the server: the URL given as
 * `--url`, the config file's `url` or `CLAWRL_URL`, in that order; else the address the server
 * itself was told to listen on, from the same config file's `host`/`port` or `CLAWRL_HOST` and
 * `CLAWRL_PORT`, so a shell (or a config file) that starts the server on another port also
 * reaches it; else the server's defaults.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface ServerUrlSources {
  /** `--url` as typed on the command line. */
  flagUrl: string | undefined;
  /** The parsed config file (`--config`, `CLAWRL_CONFIG`), or `{}`. */
  file: Record<string, unknown>;
  environment: Record<string, string | undefined>;
}

export const defaultServerHost = '127.0.0.1';
export const defaultServerPort = 8400;

/** A server bound to every interface is reached on loopback. */
const wildcardHosts: Record<string, string> = { '0.0.0.0': '127.0.0.1', '::': '::1', '[::]': '::1' };

function given(value: unknown): value is string | number {
  return (typeof value === 'string' && value.trim() !== '') || typeof value === 'number';
}

function checkedPort(value: string | number, source: string): number {
  const port = typeof value === 'number' ? value : Number(value.trim());
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ClawrlError('configuration_error', `${source} must be a port from 1 to 65535 to reach the server, got ${JSON.stringify(value)}.`, { param: 'port' });
  }
  return port;
}

export function resolveServerUrl(sources: ServerUrlSources): string {
  const { flagUrl, file, environment } = sources;
  for (const url of [flagUrl, file.url, environment.CLAWRL_URL]) {
    if (given(url)) return String(url);
  }
  const host = given(file.host) ? String(file.host) : given(environment.CLAWRL_HOST) ? environment.CLAWRL_HOST : defaultServerHost;
  const port = given(file.port)
    ? checkedPort(file.port, 'The config file\'s port')
    : given(environment.CLAWRL_PORT)
      ? checkedPort(environment.CLAWRL_PORT, 'CLAWRL_PORT')
      : defaultServerPort;
  const reachable = wildcardHosts[host] ?? host;
  const bracketed = reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable;
  return `http://${bracketed}:${port}`;
}
