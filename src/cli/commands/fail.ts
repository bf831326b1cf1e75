import { ClawrlError } from '../../spec/clawrl-error.js';

/** Ends a command that failed: one line naming the problem, exit 2 for a configuration error, else 1. */
export function fail(error: unknown): never {
  const message = ClawrlError.isInstance(error) ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`clawrl: ${message}\n`);
  process.exit(ClawrlError.isInstance(error) && error.code === 'configuration_error' ? 2 : 1);
}
