/**
 * The loop the manager and the workers share: handle each message of one topic's durable consumer
 * until stopped. A handler that could not settle its message (the queue went away) leaves it to
 * come again after its ack wait; the loop logs that and goes on.
 */
import type { Logger } from '../../spec/logger.js';
import type { QueueMessage, TaskQueue } from '../../spec/task-queue.js';

export interface ConsumeUntilStoppedOptions {
  queue: TaskQueue;
  topic: string;
  consumer: string;
  stopping: AbortSignal;
  handle(message: QueueMessage): Promise<void>;
  logger: Logger;
  /** Who is consuming, for the log line: `manager`, `worker`. */
  role: string;
}

export async function consumeUntilStopped(options: ConsumeUntilStoppedOptions): Promise<void> {
  for await (const message of options.queue.consume(options.topic, { consumer: options.consumer, signal: options.stopping })) {
    try {
      await options.handle(message);
    } catch (error) {
      if (options.stopping.aborted) return;
      options.logger.warn(`${options.role} could not settle a message`, { topic: options.topic, reason: error instanceof Error ? error.message : String(error) });
    }
  }
}
