/**
 * The judge worker of `clawrl serve` in its own thread, so judging never runs on the HTTP event
 * loop: with a fast engine the judge works flat out through queued turns (several engine calls,
 * prompt building and record reads and writes per turn), and on the loop that work delayed every
 * request (`docs/benchmarks.md`). The thread is `clawrl judge` in miniature: it opens its own
 * store connection, bus and engine client (`startJudgeProcess`) from the same configuration and
 * claims turns under a lease like any judge process, so nothing is shared but the store.
 *
 * It runs at a lower OS priority than the HTTP thread: when cores are scarce, requests come first
 * and judging takes what is left; queued turns wait, they are never lost.
 *
 * Only when the judge can have an engine of its own: with the embedded engine (`--engine local`)
 * the model lives in this process's sampler thread, so a judge that needs the engine (`--judge
 * policy`, `--method opd|combine`) stays on the main thread, where it only waits on that sampler.
 *
 * A thread that dies is restarted after a delay that doubles up to a minute; its leased turns come
 * back when their leases end.
 *
 * With the in-memory bus the thread's bus is its own: its `turn-scored` and `sample-available`
 * events reach no one (nothing in `serve` subscribes to them; the trainer polls the store), and it
 * follows policy versions through the store check every 15 s rather than `policy-published`. That
 * matters only for a remote engine that loads policy versions (`--adapter-dir`): the judge's
 * engine then switches up to 15 s after the gateway's, and reports what it serves to the main
 * thread (`serving` messages) for `/admin/status`.
 */
import { Worker } from 'node:worker_threads';
import { ClawrlError, type ClawrlErrorCode } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';
import type { PolicyServingStatus } from '../../spec/policy-serving-status.js';
import type { JudgeCommandConfiguration } from '../commands/judge-command.js';
import { judgeNeedsEngine, type RunningJudge } from './start-judge-service.js';

export interface JudgeThreadData {
  configuration: JudgeCommandConfiguration;
}

/** From the thread to the main thread. */
export type JudgeThreadMessage =
  | { kind: 'ready' }
  | { kind: 'closed' }
  | { kind: 'fatal'; error: { code: ClawrlErrorCode; message: string } }
  | { kind: 'serving'; status: PolicyServingStatus };

/** From the main thread to the thread. */
export type JudgeThreadRequest = { kind: 'close' };

/** Whether `serve` can judge in a thread: the judge needs no engine, or a remote one it can reach itself. */
export function judgeRunsInThread(configuration: Pick<JudgeCommandConfiguration, 'engine' | 'judge' | 'method'>): boolean {
  return configuration.engine !== 'local' || !judgeNeedsEngine(configuration);
}

export interface JudgeThreadOptions {
  logger: Logger;
  /** The compiled thread entry; tests pass the built one. */
  workerUrl?: URL;
  /** First restart delay after the thread died; default 1 s, doubling to 60 s. */
  restartDelayMs?: number;
  /** How long `close` waits for the thread to finish its turns in flight; default 30 s. */
  closeTimeoutMs?: number;
}

export interface RunningJudgeThread extends RunningJudge {
  /** What the thread's own engine serves, as it last reported; null when it has none that loads versions. */
  servingStatus(): PolicyServingStatus | null;
}

/** Starts the thread and waits until its judge is running; rejects with the thread's start error. */
export async function startJudgeThread(configuration: JudgeCommandConfiguration, options: JudgeThreadOptions): Promise<RunningJudgeThread> {
  const { logger } = options;
  const url = options.workerUrl ?? new URL('./judge-thread-worker.js', import.meta.url);
  const data: JudgeThreadData = { configuration };
  const initialDelayMs = options.restartDelayMs ?? 1_000;
  let closing = false;
  let current: Worker | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let delayMs = initialDelayMs;
  let servingStatus: PolicyServingStatus | null = null;

  function launch(): Promise<Worker> {
    const worker = new Worker(url, { workerData: data });
    return new Promise<Worker>((resolve, reject) => {
      const onMessage = (message: JudgeThreadMessage) => {
        if (message.kind === 'ready') {
          cleanUp();
          resolve(worker);
        } else if (message.kind === 'fatal') {
          cleanUp();
          reject(new ClawrlError(message.error.code, `the judge thread could not start: ${message.error.message}`));
        }
      };
      const onError = (error: Error) => {
        cleanUp();
        reject(new ClawrlError('internal_error', `the judge thread failed while starting: ${error.message}`, { cause: error }));
      };
      const onExit = (code: number) => {
        cleanUp();
        reject(new ClawrlError('internal_error', `the judge thread exited with code ${code} while starting`));
      };
      // Removing only these listeners matters: Worker keeps internal ones that wire up its port.
      const cleanUp = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    }).then((started) => {
      started.on('message', (message: JudgeThreadMessage) => {
        if (message.kind === 'serving' && current === started) servingStatus = message.status;
      });
      started.on('error', (error) => logger.error('the judge thread failed', { error: error.message }));
      started.once('exit', (code) => {
        if (closing || current !== started) return;
        current = undefined;
        logger.error('the judge thread stopped; restarting it (its leased turns return when their leases end)', { code, inMs: delayMs });
        scheduleRestart();
      });
      return started;
    });
  }

  function scheduleRestart(): void {
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      if (closing) return;
      launch().then(
        (worker) => {
          if (closing) {
            void worker.terminate();
            return;
          }
          current = worker;
          delayMs = initialDelayMs;
          logger.info('judge thread restarted');
        },
        (error: unknown) => {
          logger.error('restarting the judge thread failed; trying again', { error: String(error), inMs: delayMs * 2 });
          delayMs = Math.min(60_000, delayMs * 2);
          scheduleRestart();
        },
      );
    }, delayMs);
    restartTimer.unref();
  }

  current = await launch();

  return {
    servingStatus: () => servingStatus,
    async close() {
      closing = true;
      if (restartTimer !== undefined) clearTimeout(restartTimer);
      const worker = current;
      current = undefined;
      if (worker === undefined) return;
      // The thread stops claiming, lets its turns in flight go back to the queue and closes its
      // store; then it is ended (a keep-alive socket must not hold it open).
      const closed = new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          logger.warn('the judge thread did not close in time; ending it');
          resolve();
        }, options.closeTimeoutMs ?? 30_000);
        worker.on('message', (message: JudgeThreadMessage) => {
          if (message.kind !== 'closed') return;
          clearTimeout(timer);
          resolve();
        });
        worker.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      worker.postMessage({ kind: 'close' } satisfies JudgeThreadRequest);
      await closed;
      await worker.terminate();
    },
  };
}
