/**
 * The lifecycle every long-running command shares: print the ready line that scripts and
 * end-to-end tests wait for, then on SIGINT/SIGTERM close in order and exit.
 */
import type { Logger } from '../../spec/logger.js';

export function runUntilSignal(running: { close(): Promise<void> }, readyLine: string, logger: Logger): void {
  const shutdown = (signal: string) => {
    logger.info(`${signal} received: draining in-flight work and closing`);
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  // Ready only once the handlers stand: a supervisor that stops the process the moment it reads this
  // line (stdout to a pipe is written synchronously) must reach the orderly shutdown, not the
  // default action that kills the process with its files half closed.
  process.stdout.write(`${readyLine}\n`);
}
