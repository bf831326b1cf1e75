/**
 * Closes sessions that have been idle longer than the timeout. A service with an explicit
 * lifecycle: nothing runs until `start()`, and `close()` waits for a sweep in progress.
 */
import type { Logger } from '../spec/logger.js';
import type { TurnLog } from '../spec/turn-log.js';

export interface SessionReaper {
  start(): void;
  /** One sweep now; returns the ids closed. */
  sweep(): Promise<string[]>;
  close(): Promise<void>;
}

export function createSessionReaper(options: {
  store: TurnLog;
  idleTimeoutMs: number;
  intervalMs: number;
  now: () => number;
  logger: Logger;
}): SessionReaper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<string[]> | undefined;

  async function sweep(): Promise<string[]> {
    const now = options.now();
    const closed = await options.store.closeIdleSessions(now - options.idleTimeoutMs, now);
    if (closed.length > 0) options.logger.info('closed idle sessions', { count: closed.length });
    return closed;
  }

  return {
    start() {
      if (timer !== undefined) return;
      timer = setInterval(() => {
        if (running !== undefined) return;
        running = sweep()
          .catch((error: unknown) => {
            options.logger.error('idle-session sweep failed', { error: String(error) });
            return [];
          })
          .finally(() => {
            running = undefined;
          });
      }, options.intervalMs);
      timer.unref();
    },
    sweep,
    async close() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
