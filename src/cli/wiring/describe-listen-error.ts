/**
 * Turns the error of a server that could not listen into one line naming the address and what to
 * do, instead of Node's stack trace ("listen EADDRINUSE: address already in use").
 */
import { ClawrlError } from '../../spec/clawrl-error.js';

export function describeListenError(error: unknown, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (code === 'EADDRINUSE') {
    return new ClawrlError(
      'configuration_error',
      `Cannot listen on ${address}: another process already uses that port. Stop it, or pass another --port (CLAWRL_PORT; --port 0 picks a free one).`,
      { param: 'port', cause: error },
    );
  }
  if (code === 'EACCES') {
    return new ClawrlError('configuration_error', `Cannot listen on ${address}: permission denied (ports below 1024 need privileges); pass another --port (CLAWRL_PORT).`, {
      param: 'port',
      cause: error,
    });
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new ClawrlError('configuration_error', `Cannot listen on ${address}: this machine has no such address; pass another --host (CLAWRL_HOST).`, {
      param: 'host',
      cause: error,
    });
  }
  return new ClawrlError('configuration_error', `Cannot listen on ${address}: ${(error as Error).message}`, { cause: error });
}
