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
import type { Consumer, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { BusMessage, EventBus, EventName, EventPayloads, SubscribeOptions } from '../../spec/event-bus.js';
import type { Logger } from '../../spec/logger.js';
import { silentLogger } from '../../spec/logger.js';
import { checkConsumerName, checkEventName, decodeEventPayload, encodeEventPayload } from '../event-wire.js';
import { ensureNatsConsumer, ensureNatsEventStream, messageOf, natsSubjectOf } from './nats-event-stream.js';

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

/** How long one pull request waits on the server before it is renewed. */
const pullExpiresMs = 30_000;
/** Pause before pulling again after a failed pull (server restart, consumer deleted). */
const retryDelayMs = 1_000;

const aborted = Symbol('aborted');

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

  async function* iterate<E extends EventName>(event: E, subscribeOptions: SubscribeOptions): AsyncGenerator<BusMessage<EventPayloads[E]>> {
    const signal = subscribeOptions.signal ? AbortSignal.any([closing.signal, subscribeOptions.signal]) : closing.signal;
    let consumer: Consumer | null = null;
    while (!signal.aborted) {
      let received: JsMsg | null | typeof aborted;
      try {
        if (!consumer) {
          const opened = await raceAbort(openConsumer(event, subscribeOptions.consumer), signal);
          if (opened === aborted) return;
          consumer = opened;
        }
        // A message that arrives after the abort goes straight back to the consumer.
        received = await raceAbort(consumer.next({ expires: pullExpiresMs }), signal, (late) => late?.nak());
      } catch (error) {
        if (signal.aborted) return;
        logger.warn('event bus pull failed; retrying', { event, consumer: subscribeOptions.consumer, reason: messageOf(error) });
        consumer = null;
        if ((await raceAbort(delay(retryDelayMs), signal)) === aborted) return;
        continue;
      }
      if (received === aborted) return;
      if (received === null) continue;
      const decoded = decodeEventPayload(event, received.data);
      if (!decoded.ok) {
        received.term();
        logger.warn('event bus dropped a malformed message', { event, consumer: subscribeOptions.consumer, reason: decoded.reason });
        continue;
      }
      yield createMessage(decoded.payload, received, connection, assertOpen);
    }
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

async function connectToNats(servers: string | string[], name: string, timeoutMs: number): Promise<NatsConnection> {
  try {
    // A long-running service keeps reconnecting; only the first connect fails fast.
    return await connect({ servers, name, maxReconnectAttempts: -1, timeout: timeoutMs });
  } catch (error) {
    throw new ClawrlError('upstream_error', `cannot reach NATS at ${String(servers)}: ${messageOf(error)}`, { cause: error, retryable: true });
  }
}

function createMessage<Payload>(payload: Payload, received: JsMsg, connection: NatsConnection, assertOpen: () => void): BusMessage<Payload> {
  let settled = false;
  async function settle(action: () => Promise<unknown>): Promise<void> {
    if (settled) return;
    assertOpen();
    settled = true;
    try {
      await action();
    } catch (error) {
      throw new ClawrlError('upstream_error', `NATS did not take the settlement: ${messageOf(error)}`, { cause: error, retryable: true });
    }
  }
  return {
    payload,
    redeliveryCount: received.info.deliveryCount - 1,
    // ackAck waits for the server's confirmation, so an ack that resolved is never redelivered.
    ack: () => settle(() => received.ackAck()),
    nak: async (delayMs = 0) => {
      if (!Number.isFinite(delayMs) || delayMs < 0) {
        throw new ClawrlError('invalid_request', `nak delay must be a non-negative number of ms, got ${delayMs}`);
      }
      await settle(() => {
        received.nak(delayMs);
        return connection.flush();
      });
    },
  };
}

/** Resolves with the promise's value, or with `aborted` as soon as the signal aborts; a late value goes to `onLate`. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal, onLate?: (value: T) => void): Promise<T | typeof aborted> {
  const handOver = () => {
    promise.then(
      (value) => {
        try {
          onLate?.(value);
        } catch {
          // The connection is gone: the late message comes again after its ack wait anyway.
        }
      },
      () => undefined,
    );
  };
  if (signal.aborted) {
    handOver();
    return Promise.resolve(aborted);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      handOver();
      resolve(aborted);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds).unref());
}
