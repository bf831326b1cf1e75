/**
 * The distributed `TaskQueue` over NATS JetStream: one file-backed stream per topic, created when
 * the topic is first used (`tasks.arithmetic` under prefix `clawrl` is stream
 * `clawrl-queue-tasks_arithmetic` on subject `clawrl.tasks.arithmetic`), with the stream's
 * duplicate window dropping a second message of the same `Nats-Msg-Id`, and one durable pull
 * consumer with explicit acks per (topic, consumer name). Any NATS client can take part: a user's
 * own agent pulls from the same consumer, or publishes on the same subject.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Consumer, JetStreamManager } from '@nats-io/jetstream';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';
import { silentLogger } from '../../spec/logger.js';
import type { QueueMessage, TaskQueue } from '../../spec/task-queue.js';
import { checkConsumerName } from '../event-wire.js';
import { checkTopic, decodeQueuePayload, defaultQueueAckWaitMs, defaultQueueDuplicateWindowMs, encodeQueuePublish } from '../queue-wire.js';
import { ensureNatsDurableConsumer, ensureNatsStream, messageOf } from './nats-event-stream.js';
import { connectToNats, pullNatsMessages } from './pull-nats-messages.js';

export interface NatsTaskQueueOptions {
  /** NATS server URL(s), e.g. `nats://127.0.0.1:4222`. */
  servers: string | string[];
  /** Subject prefix and stream-name prefix of this deployment. Default `clawrl`. */
  prefix?: string;
  /** How long a delivered message may stay unsettled (without `working()`) before it is delivered again. Default 60 s. */
  ackWaitMs?: number;
  /** How long each topic remembers message ids. Default 24 h. */
  duplicateWindowMs?: number;
  /** Retention: each topic keeps its newest this-many messages. Default 1,000,000. */
  maxMessagesPerTopic?: number;
  /** Where malformed messages and transient pull failures are reported. */
  logger?: Logger;
  /** The connection name shown in NATS monitoring. Default `clawrl`. */
  connectionName?: string;
  /** How long the first connect waits for the server's handshake. Default 5 s. */
  connectTimeoutMs?: number;
}

/** The JetStream names of one topic: stream names cannot hold `.`, subjects are prefixed. */
export function natsQueueNamesOf(prefix: string, topic: string): { streamName: string; subject: string } {
  return { streamName: `${prefix}-queue-${topic.replaceAll('.', '_')}`, subject: `${prefix}.${topic}` };
}

export async function createNatsTaskQueue(options: NatsTaskQueueOptions): Promise<TaskQueue> {
  const prefix = options.prefix ?? 'clawrl';
  const ackWaitMs = options.ackWaitMs ?? defaultQueueAckWaitMs;
  const duplicateWindowMs = options.duplicateWindowMs ?? defaultQueueDuplicateWindowMs;
  const logger = options.logger ?? silentLogger;
  const connection = await connectToNats(options.servers, options.connectionName ?? 'clawrl', options.connectTimeoutMs ?? 5_000);
  let manager: JetStreamManager;
  try {
    manager = await jetstreamManager(connection);
  } catch (error) {
    await connection.close();
    throw new ClawrlError('configuration_error', `NATS at ${String(options.servers)} has no usable JetStream: ${messageOf(error)}`, { cause: error });
  }
  const jetStreamManager = manager;
  const client = jetstream(connection);
  const closing = new AbortController();
  const streams = new Map<string, Promise<void>>();
  let closed: Promise<void> | null = null;

  function assertOpen(): void {
    if (closing.signal.aborted) throw new ClawrlError('internal_error', 'the task queue is closed');
  }

  /** Once per topic and process; a failure is forgotten, so the next call tries again. */
  function ensureTopic(topic: string): Promise<void> {
    let ensured = streams.get(topic);
    if (!ensured) {
      const { streamName, subject } = natsQueueNamesOf(prefix, topic);
      ensured = ensureNatsStream(jetStreamManager, {
        name: streamName,
        subjects: [subject],
        maxMessagesPerSubject: options.maxMessagesPerTopic ?? 1_000_000,
        duplicateWindowMs,
      });
      ensured.catch(() => streams.delete(topic));
      streams.set(topic, ensured);
    }
    return ensured;
  }

  async function openConsumer(topic: string, consumer: string): Promise<Consumer> {
    await ensureTopic(topic);
    const { streamName, subject } = natsQueueNamesOf(prefix, topic);
    await ensureNatsDurableConsumer(jetStreamManager, { streamName, durableName: consumer, filterSubject: subject, ackWaitMs });
    return client.consumers.get(streamName, consumer);
  }

  return {
    ackWaitMs,
    async publish(topic, payload, publishOptions = {}) {
      const data = encodeQueuePublish(topic, payload, publishOptions.id);
      assertOpen();
      await ensureTopic(topic);
      const { streamName, subject } = natsQueueNamesOf(prefix, topic);
      try {
        const acknowledgement = await client.publish(subject, data, {
          expect: { streamName },
          ...(publishOptions.id === undefined ? {} : { msgID: publishOptions.id }),
        });
        return { duplicate: acknowledgement.duplicate };
      } catch (error) {
        throw new ClawrlError('upstream_error', `NATS did not accept the message on ${topic}: ${messageOf(error)}`, { cause: error, retryable: true });
      }
    },
    consume(topic, consumeOptions) {
      checkTopic(topic);
      checkConsumerName(consumeOptions.consumer);
      assertOpen();
      const fields = { topic, consumer: consumeOptions.consumer };
      const iterate = (): AsyncGenerator<QueueMessage> =>
        pullNatsMessages({
          openConsumer: () => openConsumer(topic, consumeOptions.consumer),
          signal: consumeOptions.signal ? AbortSignal.any([closing.signal, consumeOptions.signal]) : closing.signal,
          decode: decodeQueuePayload,
          onMalformed: (reason) => logger.warn('task queue dropped a malformed message', { ...fields, reason }),
          onPullFailure: (reason) => logger.warn('task queue pull failed; retrying', { ...fields, reason }),
          connection,
          assertOpen,
        });
      return { [Symbol.asyncIterator]: iterate };
    },
    close() {
      closed ??= (async () => {
        closing.abort();
        // drain() flushes outstanding naks and terms before the socket closes; unsettled
        // messages come again after their ack wait.
        await connection.drain().catch(() => connection.close());
      })();
      return closed;
    },
  };
}
