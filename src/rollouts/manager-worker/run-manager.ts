/**
 * The manager of the manager/worker loop: publishes a run's tasks on `tasks.<env>` (each once:
 * its deduplication id is `<run>/<task id>`, so a restarted manager publishes none twice), reads
 * `results.<env>` through its own durable consumer (`manager-<run>`, so a restarted manager
 * resumes where the last one stopped and other runs' managers each read their own), appraises
 * each result of its run, and posts the appraisal as feedback on the result's last turn.
 *
 * A result is acked only after the gateway accepted the feedback. A result that comes again (the
 * manager died between feedback and ack) finds its turn already has feedback and is acked without
 * a second appraisal; a second result for a task this manager already appraised is acked unread.
 */
import type { EnvironmentDefinition, EnvironmentTask } from '../../spec/environment.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';
import type { QueueMessage, TaskQueue } from '../../spec/task-queue.js';
import { consumeUntilStopped } from './consume-until-stopped.js';
import type { AppraiseResult } from './appraise-result.js';
import type { GatewayFeedbackClient } from './gateway-feedback-client.js';
import { resultMessageSchema, resultsTopicOf, rolloutMessageIdOf, tasksTopicOf } from './rollout-queue-api.js';
import type { TaskMessage } from './rollout-queue-api.js';

export interface ManagerOptions {
  queue: TaskQueue;
  environment: EnvironmentDefinition;
  run: string;
  /** The run's tasks, from the environment's task source: the manager's own copy, which results are verified against. */
  tasks: EnvironmentTask[];
  appraise: AppraiseResult;
  gateway: GatewayFeedbackClient;
  logger: Logger;
  /** Called after each appraisal the gateway accepted (`--json` output, tests). */
  onAppraisal?: (appraisal: AppraisalRecord) => void;
}

/** One line of `clawrl manager --json`. */
export interface AppraisalRecord {
  run: string;
  taskId: string;
  sessionId: string;
  turnId: string;
  worker: string;
  /** The reward posted: the verifier's outcome reward, or the judge's score. */
  reward: number;
  correct: boolean | null;
  appraiser: string;
  feedbackId: number;
  /** Tasks of the run this process has appraised (or found appraised), and the run's size. */
  appraised: number;
  tasks: number;
}

export interface PublishTasksResult {
  published: number;
  /** Tasks the topic already had from this run (a restarted manager). */
  duplicates: number;
}

export interface RunningManager {
  readonly published: PublishTasksResult;
  readonly done: Promise<void>;
  close(): Promise<void>;
}

const retryDelayMs = 5_000;

/** `manager-<run>`: the results consumer of one run, at most 64 characters. */
export function managerConsumerOf(run: string): string {
  return `manager-${run}`.slice(0, 64);
}

export async function startManager(options: ManagerOptions): Promise<RunningManager> {
  const { environment, run, logger } = options;
  const tasksById = new Map(options.tasks.map((task) => [task.id, task]));
  const appraised = new Set<string>();
  const stopping = new AbortController();

  const published: PublishTasksResult = { published: 0, duplicates: 0 };
  for (const task of options.tasks) {
    const message: TaskMessage = { run, environment: environment.name, task };
    const { duplicate } = await options.queue.publish(tasksTopicOf(environment.name), message, { id: rolloutMessageIdOf(run, task.id) });
    if (duplicate) published.duplicates += 1;
    else published.published += 1;
  }
  logger.info('manager published tasks', { run, environment: environment.name, ...published });

  async function handle(message: QueueMessage): Promise<void> {
    const parsed = resultMessageSchema.safeParse(message.payload);
    if (!parsed.success) {
      logger.warn('manager dropped a malformed result', { run, reason: parsed.error.issues[0]?.message });
      await message.ack();
      return;
    }
    const result = parsed.data;
    if (result.run !== run) {
      await message.ack(); // another run's result: its own manager reads it through its own consumer
      return;
    }
    const task = tasksById.get(result.task.id);
    if (task === undefined) {
      logger.warn('manager dropped a result for a task its run does not have', { run, task: result.task.id });
      await message.ack();
      return;
    }
    if (appraised.has(task.id)) {
      logger.info('manager skipped a second result for an appraised task', { run, task: task.id, sessionId: result.sessionId });
      await message.ack();
      return;
    }
    const turnId = result.turnIds.at(-1) as string;
    const fields = { run, task: task.id, sessionId: result.sessionId, turnId, worker: result.worker };
    try {
      if ((await options.gateway.feedbackCount(turnId)) > 0) {
        appraised.add(task.id);
        logger.info('manager found the result already appraised', fields);
        await message.ack();
        return;
      }
      const appraisal = await options.appraise(task, result, stopping.signal);
      if (appraisal === null) throw new ClawrlError('upstream_error', 'the judge gave no readable verdict', { retryable: true });
      const feedbackId = await options.gateway.postFeedback({
        turnId,
        text: appraisal.text,
        // Each task is solved once, so a bus rollout has no group to be compared within (group
        // null): the trainer measures its reward against the recipe's rewardBaseline, as live traffic.
        rollout: {
          run_id: run,
          environment: environment.name,
          step: 0,
          group: null,
          turn_index: result.turnIds.length - 1,
          outcome_reward: appraisal.outcomeReward ?? appraisal.reward,
          process_reward: null,
          reward: appraisal.reward,
        },
      });
      appraised.add(task.id);
      await message.ack();
      const record: AppraisalRecord = {
        run,
        taskId: task.id,
        sessionId: result.sessionId,
        turnId,
        worker: result.worker,
        reward: appraisal.reward,
        correct: appraisal.correct,
        appraiser: appraisal.appraiser,
        feedbackId,
        appraised: appraised.size,
        tasks: tasksById.size,
      };
      logger.info('manager appraised a result', { ...fields, reward: appraisal.reward, appraised: appraised.size, tasks: tasksById.size });
      options.onAppraisal?.(record);
    } catch (error) {
      if (stopping.signal.aborted) {
        await message.nak().catch(() => undefined);
        return;
      }
      const reason = error instanceof Error ? error.message : String(error);
      if (ClawrlError.isInstance(error) && (error.code === 'not_found' || error.code === 'invalid_request')) {
        // A turn the gateway does not know (a result naming another gateway's turns) or evidence
        // the verifier cannot read will not get better by waiting. Anything else (the gateway is
        // down, a key is refused, the judge failed) is waited out: giving up would lose the result.
        logger.error('manager gave up a result', { ...fields, reason });
        await message.ack();
        return;
      }
      logger.warn('manager could not appraise a result yet; it will come again', { ...fields, reason, redelivery: message.redeliveryCount });
      await message.nak(retryDelayMs);
    }
  }

  const done = consumeUntilStopped({ queue: options.queue, topic: resultsTopicOf(environment.name), consumer: managerConsumerOf(run), stopping: stopping.signal, handle, logger, role: 'manager' });

  return {
    published,
    done,
    async close() {
      stopping.abort();
      await done.catch(() => undefined);
    },
  };
}
