/**
 * `clawrl worker`: takes tasks of one environment from the bus (`tasks.<env>`, the durable
 * consumer every worker shares), solves each with one rollout through a running clawrl server
 * (`--url`), and publishes the result on `results.<env>` (docs/environments.md, "Bus topics").
 * Run as many as the server serves; a worker killed mid-task loses nothing: the task goes to
 * another worker once its ack wait ends.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { loadEnvironment } from '../../rollouts/environments/environment-registry.js';
import { createRolloutClient, type RolloutClient } from '../../rollouts/rollout-client.js';
import type { ResultMessage } from '../../rollouts/manager-worker/rollout-queue-api.js';
import { startWorker, type RunningWorker } from '../../rollouts/manager-worker/run-worker.js';
import { solveWithEpisode } from '../../rollouts/manager-worker/solve-with-episode.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { EnvironmentDefinition } from '../../spec/environment.js';
import type { Logger } from '../../spec/logger.js';
import type { TaskQueue } from '../../spec/task-queue.js';
import type { commandSchemas } from '../configuration/configuration-schema.js';
import type { Resolved } from '../configuration/configuration.js';
import { createShutdownStack, type ShutdownStack } from '../wiring/create-shutdown-stack.js';
import { clientKeyOf } from './eval-command.js';
import { consumerNameOf } from '../wiring/open-event-bus.js';
import { openTaskQueue } from '../wiring/open-task-queue.js';

export type WorkerCommandConfiguration = Resolved<z.infer<typeof commandSchemas.worker>>;

/** What manager and worker commands share: the environment, and a client of the server that answers. */
export async function openEnvironmentAndServer(
  configuration: Pick<WorkerCommandConfiguration, 'env' | 'apiKey' | 'adminKey' | 'sandbox'>,
  url: string,
  logger: Logger,
): Promise<{ definition: EnvironmentDefinition; client: RolloutClient }> {
  if (configuration.env === undefined) {
    throw new ClawrlError('configuration_error', 'Give the environment with --env <environment> (or CLAWRL_ENV), e.g. --env arithmetic.', { param: 'env' });
  }
  const definition = await loadEnvironment(configuration.env, process.cwd(), { sandbox: configuration.sandbox, logger });
  const client = createRolloutClient({ url, apiKey: clientKeyOf(configuration.apiKey), adminKey: configuration.adminKey });
  try {
    await client.modelName();
  } catch (error) {
    throw new ClawrlError('upstream_error', `Cannot reach clawrl at ${url} (${error instanceof Error ? error.message : String(error)}). Start it (clawrl serve) or point --url (CLAWRL_URL) at it.`, { cause: error });
  }
  return { definition, client };
}

export interface BusWorkerOptions {
  queue: TaskQueue;
  definition: EnvironmentDefinition;
  client: RolloutClient;
  configuration: Pick<WorkerCommandConfiguration, 'maxTokens' | 'temperature'>;
  logger: Logger;
  onResult?: (result: ResultMessage, duplicate: boolean) => void;
}

/** Starts one worker per name (`clawrl worker`: one; `clawrl manager --workers n`: n), each closed by `parts`. */
export function startBusWorkers(parts: ShutdownStack, names: string[], options: BusWorkerOptions): void {
  for (const worker of names) parts.add(startBusWorker({ ...options, worker }), (started) => started.close());
}

function startBusWorker(options: BusWorkerOptions & { worker: string }): RunningWorker {
  const { configuration } = options;
  return startWorker({
    queue: options.queue,
    environment: options.definition.name,
    solve: solveWithEpisode({
      client: options.client,
      definition: options.definition,
      sampling: { maxTokens: configuration.maxTokens, ...(configuration.temperature === undefined ? {} : { temperature: configuration.temperature }) },
    }),
    worker: options.worker,
    logger: options.logger,
    // A fresh session per delivery: a redelivered task must not continue a dead worker's conversation.
    createSessionId: ({ run, task }) => `${run}-${task.id}-${randomUUID().slice(0, 8)}`,
    ...(options.onResult === undefined ? {} : { onResult: options.onResult }),
  });
}

export function formatResultLine(result: ResultMessage, duplicate: boolean): string {
  const summary = `task ${result.task.id}: session ${result.sessionId}, ${result.turnIds.length} turn(s), ${result.transcript.finish}`;
  return duplicate ? `${summary} (the run already had a result for it)` : summary;
}

export async function startWorkerProcess(configuration: WorkerCommandConfiguration, url: string, logger: Logger): Promise<{ close(): Promise<void> }> {
  if (configuration.bus === 'memory') {
    throw new ClawrlError('configuration_error', 'clawrl worker needs --bus nats (and --bus-url): an in-memory queue is private to one process; run clawrl manager --workers <n> for one process.', { param: 'bus' });
  }
  const { definition, client } = await openEnvironmentAndServer(configuration, url, logger);
  const parts = createShutdownStack(logger);
  try {
    const queue = parts.add(await openTaskQueue(configuration, logger, 'clawrl-worker'), (opened) => opened.close());
    const worker = consumerNameOf('worker', configuration.instance, `${hostname()}-${process.pid}`);
    startBusWorkers(parts, [worker], {
      queue,
      definition,
      client,
      configuration,
      logger,
      onResult: (result, duplicate) => process.stdout.write(`${configuration.json ? JSON.stringify({ ...result, duplicate }) : formatResultLine(result, duplicate)}\n`),
    });
    logger.info('worker started', { environment: definition.name, url, worker });
    return { close: () => parts.close() };
  } catch (error) {
    await parts.close();
    throw error;
  }
}
