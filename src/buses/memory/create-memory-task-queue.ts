/**
 * The one-process `TaskQueue`: a `clawrl manager` and its workers in one process, and tests.
 * Queues opened over one broker share topics, durable consumers and the duplicate window, so a
 * queue closed and re-opened over the same broker behaves like a NATS client that reconnects.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';
import { silentLogger } from '../../spec/logger.js';
import type { QueueMessage, TaskQueue } from '../../spec/task-queue.js';
import { checkConsumerName } from '../event-wire.js';
import { checkTopic, decodeQueuePayload, defaultQueueAckWaitMs, defaultQueueDuplicateWindowMs, encodeQueuePublish } from '../queue-wire.js';
import { deliverMemoryMessages } from './deliver-memory-messages.js';
import { createMemoryEventBroker } from './memory-event-broker.js';
import type { MemoryEventBroker } from './memory-event-broker.js';

export interface MemoryTaskQueueOptions {
  /** The broker to connect to; default a new private one (then nothing outlives this queue). */
  broker?: MemoryEventBroker;
  /** How long a delivered message may stay unsettled before it is delivered again. Default 60 s. */
  ackWaitMs?: number;
  /** How long a deduplication id is remembered per topic. Default 24 h. */
  duplicateWindowMs?: number;
  /** Where malformed messages are reported. */
  logger?: Logger;
}

export function createMemoryTaskQueue(options: MemoryTaskQueueOptions = {}): TaskQueue {
  const broker = options.broker ?? createMemoryEventBroker();
  const ackWaitMs = options.ackWaitMs ?? defaultQueueAckWaitMs;
  const windowMs = options.duplicateWindowMs ?? defaultQueueDuplicateWindowMs;
  const logger = options.logger ?? silentLogger;
  const closing = new AbortController();

  function assertOpen(): void {
    if (closing.signal.aborted) throw new ClawrlError('internal_error', 'the task queue is closed');
  }

  return {
    ackWaitMs,
    async publish(topic, payload, publishOptions = {}) {
      const data = encodeQueuePublish(topic, payload, publishOptions.id);
      assertOpen();
      const appended = broker.append(topic, data, publishOptions.id === undefined ? undefined : { id: publishOptions.id, windowMs });
      return { duplicate: !appended };
    },
    consume(topic, consumeOptions) {
      checkTopic(topic);
      checkConsumerName(consumeOptions.consumer);
      assertOpen();
      const iterate = (): AsyncGenerator<QueueMessage> =>
        deliverMemoryMessages({
          consumer: broker.consumer(topic, consumeOptions.consumer),
          signal: consumeOptions.signal ? AbortSignal.any([closing.signal, consumeOptions.signal]) : closing.signal,
          ackWaitMs,
          decode: decodeQueuePayload,
          onMalformed: (reason) => logger.warn('task queue dropped a malformed message', { topic, consumer: consumeOptions.consumer, reason }),
          assertOpen,
        });
      return { [Symbol.asyncIterator]: iterate };
    },
    async close() {
      // Unsettled deliveries stay with the broker and come again after their ack wait, as for a crashed client.
      closing.abort();
    },
  };
}
