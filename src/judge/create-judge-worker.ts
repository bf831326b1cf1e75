/**
 * The judge worker: claims queued turns from the record store under a lease, judges them and
 * builds their samples (`judge-turn.ts`), at most `concurrency` at a time. A failure (the judge or
 * the engine unreachable, a time-out, the store) releases the turn for a retry after an
 * exponential backoff: the turn stays queued, however long the outage lasts. A worker that dies
 * mid-turn loses nothing either: its lease expires and any worker claims the turn again.
 *
 * A service with an explicit lifecycle: nothing runs until `start()`; `close()` stops claiming,
 * aborts the turns in flight (they go back to the queue) and waits for them.
 */
import { retryDelayMs } from '../core/retry-delay.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine } from '../spec/inference-engine.js';
import type { Judge } from '../spec/judge.js';
import type { Logger } from '../spec/logger.js';
import type { JudgingQueue } from '../spec/judging-queue.js';
import type { JudgeClaim, SampleMethod } from '../spec/records.js';
import type { JudgeMemory } from './judge-memory.js';
import { judgeTurn } from './judge-turn.js';

export interface JudgeWorkerOptions {
  store: JudgingQueue;
  judge: Judge;
  method: SampleMethod;
  /** The policy engine, for OPD teacher log-probs; without one (or without scoring) OPD samples are dropped. */
  engine?: InferenceEngine;
  logger: Logger;
  /** Epoch milliseconds. */
  now: () => number;
  createId: (prefix: string) => string;
  /** Unique per process: leases are held in its name. */
  workerId: string;
  /** Turns judged at once; default 2. */
  concurrency?: number;
  /** Default 15 minutes; must outlast `turnTimeoutMs`. */
  leaseMs?: number;
  /** Time one turn may take (judge and teacher calls); default 5 minutes. */
  turnTimeoutMs?: number;
  /** How often an idle worker looks for due turns; default 1 s. */
  pollIntervalMs?: number;
  /** Backoff after the n-th failure: min(maxMs, initialMs · 2^(n−1)); defaults 1 s and 5 min. */
  retry?: { initialMs: number; maxMs: number };
  /** k of the overlap-guided hint selection; default 4. */
  overlapTopK?: number;
  /** k of the optional student top-k support set; default 0 (none). */
  supportTopK?: number;
  /** The share of sessions held out of training for the replay gate; default 0 (`--gate replay` sets it). */
  heldOutShare?: number;
  /** Score OPD teachers under the version that sampled each turn (`--policy-scope user`); default false, the served version. */
  teacherUnderTurnVersion?: boolean;
  /** Each user's memory (`--user-memory`); absent, `off`. */
  memory?: JudgeMemory;
}

export interface DrainResult {
  done: number;
  failed: number;
}

export interface JudgeWorker {
  start(): void;
  /**
   * Processes due turns until none is due, then resolves. For tests and one-shot runs; do not
   * mix with `start()`.
   */
  drain(): Promise<DrainResult>;
  close(): Promise<void>;
}


export function createJudgeWorker(options: JudgeWorkerOptions): JudgeWorker {
  const concurrency = options.concurrency ?? 2;
  const leaseMs = options.leaseMs ?? 15 * 60_000;
  const turnTimeoutMs = options.turnTimeoutMs ?? 5 * 60_000;
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const retry = options.retry ?? { initialMs: 1_000, maxMs: 5 * 60_000 };
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ClawrlError('configuration_error', `judge concurrency must be a positive integer, got ${concurrency}`);
  }
  if (!(retry.initialMs > 0) || retry.maxMs < retry.initialMs) {
    throw new ClawrlError('configuration_error', `judge retry delays must be positive with maxMs ≥ initialMs, got ${JSON.stringify(retry)}`);
  }
  if (leaseMs <= turnTimeoutMs) {
    throw new ClawrlError('configuration_error', `the judge lease (${leaseMs} ms) must outlast the turn time-out (${turnTimeoutMs} ms)`);
  }
  const dependencies = {
    store: options.store,
    judge: options.judge,
    method: options.method,
    engine: options.engine,
    overlapTopK: options.overlapTopK ?? 4,
    supportTopK: options.supportTopK ?? 0,
    heldOutShare: options.heldOutShare ?? 0,
    teacherUnderTurnVersion: options.teacherUnderTurnVersion ?? false,
    ...(options.memory === undefined ? {} : { memory: options.memory }),
    now: options.now,
    createId: options.createId,
  };
  const stopping = new AbortController();
  const inFlight = new Set<Promise<boolean>>();
  let timer: NodeJS.Timeout | undefined;
  let pumping = false;
  let closed = false;

  /** Judges one claimed turn and releases it; resolves true when it was done. */
  async function handle(claim: JudgeClaim): Promise<boolean> {
    const release = { turnId: claim.turn.id, workerId: options.workerId, generation: claim.generation };
    try {
      await judgeTurn(claim, dependencies, AbortSignal.any([stopping.signal, AbortSignal.timeout(turnTimeoutMs)]));
      await options.store.releaseTurn({ ...release, outcome: { kind: 'done' } });
      return true;
    } catch (error) {
      const attempts = claim.attempts + 1;
      const delay = stopping.signal.aborted ? 0 : retryDelayMs(attempts, retry);
      const message = error instanceof Error ? error.message : String(error);
      options.logger.warn('judging a turn failed; it stays queued', { turnId: claim.turn.id, attempts, retryInMs: delay, error: message });
      try {
        await options.store.releaseTurn({ ...release, outcome: { kind: 'failed', error: message, retryAt: options.now() + delay } });
      } catch (releaseError) {
        // The lease expires on its own, and the turn is claimable again then.
        options.logger.error('releasing a failed turn failed', { turnId: claim.turn.id, error: String(releaseError) });
      }
      return false;
    }
  }

  async function claim(limit: number): Promise<JudgeClaim[]> {
    return options.store.claimTurnsForJudging({ limit, leaseMs, now: options.now(), workerId: options.workerId });
  }

  async function pump(): Promise<void> {
    if (pumping || closed) return;
    pumping = true;
    try {
      while (!closed && inFlight.size < concurrency) {
        const claims = await claim(concurrency - inFlight.size);
        if (claims.length === 0) break;
        for (const claimed of claims) {
          const task: Promise<boolean> = handle(claimed).finally(() => {
            inFlight.delete(task);
            void pump();
          });
          inFlight.add(task);
        }
      }
    } catch (error) {
      options.logger.error('claiming turns for judging failed', { error: String(error) });
    } finally {
      pumping = false;
    }
  }

  return {
    start() {
      if (timer !== undefined || closed) return;
      timer = setInterval(() => void pump(), pollIntervalMs);
      timer.unref();
      void pump();
    },
    async drain() {
      const result: DrainResult = { done: 0, failed: 0 };
      for (;;) {
        const claims = await claim(concurrency);
        if (claims.length === 0) return result;
        for (const succeeded of await Promise.all(claims.map(handle))) {
          if (succeeded) result.done += 1;
          else result.failed += 1;
        }
      }
    },
    async close() {
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      stopping.abort(new ClawrlError('upstream_error', 'the judge worker is closing'));
      await Promise.all([...inFlight]);
    },
  };
}
