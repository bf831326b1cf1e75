/**
 * A worker of the manager/worker loop: takes tasks from `tasks.<env>` through a durable consumer
 * that every worker shares (so the queue spreads the work), solves each with one rollout through
 * the gateway (its turns are recorded like any traffic), publishes the result on `results.<env>`,
 * and acks the task only then. While a rollout runs the worker keeps telling the queue it is on
 * the task (`working()`), so the ack wait only runs out for a worker that died or hung, and the
 * task goes to another worker.
 *
 * A redelivered task is solved again, in a new session; its result has the same deduplication id
 * as the first one's (`<run>/<task id>`), so a task whose first worker published and then died
 * before its ack still reaches the manager once.
 */
import type { EnvironmentOutcome } from '../../spec/environment.js';
import type { Logger } from '../../spec/logger.js';
import type { QueueMessage, TaskQueue } from '../../spec/task-queue.js';
import { consumeUntilStopped } from './consume-until-stopped.js';
import { resultsTopicOf, rolloutMessageIdOf, taskMessageSchema, tasksTopicOf } from './rollout-queue-api.js';
import type { ResultMessage, TaskMessage, TranscriptSummary } from './rollout-queue-api.js';

/** What one rollout left: its gateway ids, the environment's evidence and a summary. */
export interface SolvedRollout {
  sessionId: string;
  turnIds: string[];
  outcome: EnvironmentOutcome;
  transcript: TranscriptSummary;
}

/** One rollout of the message's task through the gateway, in session `sessionId`. */
export type SolveTask = (message: TaskMessage, sessionId: string, signal: AbortSignal) => Promise<SolvedRollout>;

export interface WorkerOptions {
  queue: TaskQueue;
  environment: string;
  solve: SolveTask;
  /** This worker's name in results and logs. */
  worker: string;
  /** The durable consumer every worker of the environment shares. Default `workers`. */
  consumer?: string;
  logger: Logger;
  /** Deliveries of one task before the worker gives it up (logged as an error and settled). Default 5. */
  maxDeliveries?: number;
  /** Called after each result is published (tests, `--json` output). */
  onResult?: (result: ResultMessage, duplicate: boolean) => void;
  createSessionId: (message: TaskMessage) => string;
}

export interface RunningWorker {
  /** Settles when the worker stopped (closed, or the queue closed). */
  readonly done: Promise<void>;
  /** Stops taking tasks; a rollout in progress is abandoned and its task given back at once. */
  close(): Promise<void>;
}

/** How long a task that failed waits before it is tried again (by any worker). */
const retryDelayMs = 5_000;

export function startWorker(options: WorkerOptions): RunningWorker {
  const stopping = new AbortController();
  const consumer = options.consumer ?? 'workers';
  const maxDeliveries = options.maxDeliveries ?? 5;
  const { logger } = options;

  async function handle(message: QueueMessage): Promise<void> {
    const parsed = taskMessageSchema.safeParse(message.payload);
    if (!parsed.success || parsed.data.environment !== options.environment) {
      logger.warn('worker dropped a message that is not a task of its environment', {
        environment: options.environment,
        reason: parsed.success ? `environment ${parsed.data.environment}` : parsed.error.issues[0]?.message,
      });
      await message.ack();
      return;
    }
    const taskMessage = parsed.data;
    const fields = { run: taskMessage.run, task: taskMessage.task.id, redelivery: message.redeliveryCount };
    logger.info('worker took task', fields);
    const heartbeat = setInterval(() => {
      message.working().catch((error: unknown) => logger.warn('worker could not hold its task', { ...fields, reason: String(error) }));
    }, Math.max(100, Math.floor(options.queue.ackWaitMs / 3)));
    try {
      const sessionId = options.createSessionId(taskMessage);
      const solved = await untilAborted(options.solve(taskMessage, sessionId, stopping.signal), stopping.signal);
      const result: ResultMessage = { run: taskMessage.run, environment: options.environment, task: taskMessage.task, ...solved, worker: options.worker };
      const { duplicate } = await options.queue.publish(resultsTopicOf(options.environment), result, { id: rolloutMessageIdOf(taskMessage.run, taskMessage.task.id) });
      clearInterval(heartbeat);
      await message.ack();
      logger.info('worker published result', { ...fields, sessionId: solved.sessionId, turns: solved.turnIds.length, duplicate });
      options.onResult?.(result, duplicate);
    } catch (error) {
      clearInterval(heartbeat);
      if (stopping.signal.aborted) {
        await message.nak().catch(() => undefined);
        return;
      }
      const reason = error instanceof Error ? error.message : String(error);
      if (message.redeliveryCount + 1 >= maxDeliveries) {
        logger.error('worker gave up a task after repeated failures', { ...fields, reason });
        await message.ack();
        return;
      }
      logger.warn('worker failed a task; it will be tried again', { ...fields, reason });
      await message.nak(retryDelayMs);
    }
  }

  const done = consumeUntilStopped({ queue: options.queue, topic: tasksTopicOf(options.environment), consumer, stopping: stopping.signal, handle, logger, role: 'worker' });

  return {
    done,
    async close() {
      stopping.abort();
      await done.catch(() => undefined);
    },
  };
}

/** The rollout's result, or a rejection as soon as the worker stops: a stopping worker gives its task back without waiting for a reply. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('the worker is stopping'));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error('the worker is stopping'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
