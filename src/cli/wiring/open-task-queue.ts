/**
 * Opens the task queue of `clawrl manager` and `clawrl worker`: NATS JetStream at `--bus-url`
 * under `--bus-prefix` (a stream per topic), or in memory when the manager runs its workers in
 * its own process (`--workers`).
 */
import { createMemoryTaskQueue } from '../../buses/memory/create-memory-task-queue.js';
import { createNatsTaskQueue } from '../../buses/nats/create-nats-task-queue.js';
import type { Logger } from '../../spec/logger.js';
import type { TaskQueue } from '../../spec/task-queue.js';
import { natsServersOf, type BusConfiguration } from './open-event-bus.js';

export interface QueueConfiguration extends BusConfiguration {
  /** `--ack-wait`, in seconds. */
  ackWait: number;
}

export async function openTaskQueue(configuration: QueueConfiguration, logger: Logger, connectionName: string): Promise<TaskQueue> {
  const ackWaitMs = configuration.ackWait * 1000;
  if (configuration.bus === 'memory') return createMemoryTaskQueue({ ackWaitMs, logger });
  return createNatsTaskQueue({ servers: natsServersOf(configuration), prefix: configuration.busPrefix, ackWaitMs, logger, connectionName });
}
