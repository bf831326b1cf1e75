/**
 * `--retain-days <n>`: every turn that started more than n days ago is erased, with everything
 * derived from it, by the same erasure as `clawrl data delete --before` (`data-eraser.ts`). It runs
 * on a timer of its own, never inside a request, one run at a time; each run erases what aged past
 * the cut since the last, so after the first run on an old database a run is small.
 */
import type { Logger } from '../spec/logger.js';
import type { DataEraser, DataErasureResult } from './data-eraser.js';

export interface RetentionScheduleOptions {
  eraser: DataEraser;
  retainDays: number;
  /** How often to erase what aged past the cut. */
  intervalMs: number;
  /** Epoch milliseconds; injected so tests move time. */
  now: () => number;
  logger: Logger;
}

export interface RetentionSchedule {
  start(): void;
  /** Erases what is older than the retention now; resolves with its result. */
  runOnce(): Promise<DataErasureResult>;
  /** Stops the timer and waits for a running erasure. */
  close(): Promise<void>;
}

const dayMs = 24 * 60 * 60 * 1000;

export function createRetentionSchedule(options: RetentionScheduleOptions): RetentionSchedule {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;

  const runOnce = (): Promise<DataErasureResult> => {
    const result = options.eraser.erase({ kind: 'before', before: options.now() - options.retainDays * dayMs });
    running = result.catch(() => undefined);
    return result;
  };

  return {
    start() {
      const tick = () => {
        if (busy) return;
        busy = true;
        runOnce()
          .then((result) => {
            if (result.erased.turns > 0) options.logger.info('retention erased old turns', { retainDays: options.retainDays, erased: result.erased });
          })
          .catch((error: unknown) => options.logger.error('retention erasure failed; it runs again at the next interval', { error: String(error) }))
          .finally(() => {
            busy = false;
          });
      };
      timer = setInterval(tick, options.intervalMs);
      timer.unref();
      // The first run at once: a server started on an old database does not keep it an interval longer.
      tick();
    },
    runOnce,
    async close() {
      if (timer !== undefined) clearInterval(timer);
      await running;
    },
  };
}
