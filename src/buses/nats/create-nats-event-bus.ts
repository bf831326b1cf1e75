/**
 * The distributed `EventBus` over NATS JetStream: one file-backed stream with limits retention,
 * one subject per event (`<prefix>.turn.recorded`, ...), and one durable pull consumer with
 * explicit acks per (event, consumer name), so any process can take over a consumer's work.
 *
 * Subscribers pull one message at a time, when the caller asks for the next one, rather than
 * through `consume()`: `consume()` refills its buffer as messages arrive, not as they are
 * processed, so a slow or stuck subscriber (a trainer mid-step) would hoard messages whose ack
 * wait runs out in its buffer, and they would be delivered twice. Pulling on demand starts each
 * message's ack wait when its processing starts and lets an idle subscriber take the rest.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Consumer, JetStreamManager } from '@nats-io/jetstream';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { BusMessage, EventBus, EventName, EventPayloads, SubscribeOptions } from '../../spec/event-bus.js';
import type { Logger } from '../../spec/logger.js';
import { silentLogger } from '../../spec/logger.js';
import { checkConsumerName, checkEventName, decodeEventPayload, encodeEventPayload } from '../event-wire.js';
import { ensureNatsConsumer, ensureNatsEventStream, messageOf, natsSubjectOf } from './nats-event-stream.js';
import { connectToNats, pullNatsMessages } from './pull-nats-messages.js';

export interface NatsEventBusOptions {
  /** NATS server URL(s), e.g. `nats://127.0.0.1:4222`. */
  servers: string | string[];
  /** JetStream stream holding every event. Default `clawrl`. */
  streamName?: string;
  /** Subject prefix: events go to `<prefix>.turn.recorded` and so on. Default `clawrl`. */
  subjectPrefix?: string;
  /** How long a delivered message may stay unsettled before it is delivered again. Default 30 s. */
  ackWaitMs?: number;
  /** Retention: each event keeps its newest this-many messages. Default 1,000,000. */
  maxMessagesPerEvent?: number;
  /** Where malformed messages and transient pull failures are reported. */
  logger?: Logger;
  /** The connection name shown in NATS monitoring. Default `clawrl`. */
  connectionName?: string;
  /** How long the first connect waits for the server's handshake. Default 5 s. */
  connectTimeoutMs?: number;
}

/** Connects, creates or updates the stream, and returns the bus. Fails with a retryable `ClawrlError` when NATS is unreachable. */
export async function createNatsEventBus(options: NatsEventBusOptions): Promise<EventBus> {
  const streamName = options.streamName ?? 'clawrl';
  const subjectPrefix = options.subjectPrefix ?? 'clawrl';
  const ackWaitMs = options.ackWaitMs ?? 30_000;
  const logger = options.logger ?? silentLogger;
  const connection = await connectToNats(options.servers, options.connectionName ?? 'clawrl', options.connectTimeoutMs ?? 5_000);
  let manager: JetStreamManager;
  try {
    manager = await jetstreamManager(connection);
    await ensureNatsEventStream(manager, { streamName, subjectPrefix, maxMessagesPerEvent: options.maxMessagesPerEvent ?? 1_000_000 });
  } catch (error) {
    await connection.close();
    if (ClawrlError.isInstance(error)) throw error;
    throw new ClawrlError('configuration_error', `NATS at ${String(options.servers)} has no usable JetStream: ${messageOf(error)}`, { cause: error });
  }
  const jetStreamManager = manager;
  const client = jetstream(connection);
  const closing = new AbortController();
  let closed: Promise<void> | null = null;

  function assertOpen(): void {
    if (closing.signal.aborted) throw new ClawrlError('internal_error', 'the event bus is closed');
  }

  async function openConsumer(event: EventName, consumer: string): Promise<Consumer> {
    const durableName = await ensureNatsConsumer(jetStreamManager, { streamName, subjectPrefix, event, consumer, ackWaitMs });
    return client.consumers.get(streamName, durableName);
  }

  function iterate<E extends EventName>(event: E, subscribeOptions: SubscribeOptions): AsyncGenerator<BusMessage<EventPayloads[E]>> {
    const fields = { event, consumer: subscribeOptions.consumer };
    return pullNatsMessages({
      openConsumer: () => openConsumer(event, subscribeOptions.consumer),
      signal: subscribeOptions.signal ? AbortSignal.any([closing.signal, subscribeOptions.signal]) : closing.signal,
      decode: (data) => decodeEventPayload(event, data),
      onMalformed: (reason) => logger.warn('event bus dropped a malformed message', { ...fields, reason }),
      onPullFailure: (reason) => logger.warn('event bus pull failed; retrying', { ...fields, reason }),
      connection,
      assertOpen,
    });
  }

  return {
    async publish(event, payload) {
      assertOpen();
      const data = encodeEventPayload(event, payload);
      try {
        await client.publish(natsSubjectOf(subjectPrefix, event), data, { expect: { streamName } });
      } catch (error) {
        throw new ClawrlError('upstream_error', `NATS did not accept the ${event} event: ${messageOf(error)}`, { cause: error, retryable: true });
      }
    },
    subscribe(event, subscribeOptions) {
      checkEventName(event);
      checkConsumerName(subscribeOptions.consumer);
      assertOpen();
      return { [Symbol.asyncIterator]: () => iterate(event, subscribeOptions) };
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
