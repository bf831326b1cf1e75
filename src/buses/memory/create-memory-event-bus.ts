/**
 * The one-process `EventBus`: the default when gateway, judge and trainer share a process.
 * Each bus is a client of a `MemoryEventBroker`. Buses opened over one broker share durable
 * consumers, so a bus that is closed and replaced by a new one over the same broker behaves like
 * a NATS client that reconnects; nothing survives the process itself (the record store is the
 * source of truth, so services rebuild from it after a restart).
 *
 * Payloads are encoded and validated exactly as on NATS, so subscribers never share an object
 * with the publisher and a malformed message is handled the same way.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { BusMessage, EventBus, EventName, EventPayloads, SubscribeOptions } from '../../spec/event-bus.js';
import type { Logger } from '../../spec/logger.js';
import { silentLogger } from '../../spec/logger.js';
import { checkConsumerName, checkEventName, decodeEventPayload, encodeEventPayload } from '../event-wire.js';
import { createMemoryEventBroker } from './memory-event-broker.js';
import type { MemoryEventBroker } from './memory-event-broker.js';
import { deliverMemoryMessages } from './deliver-memory-messages.js';

export interface MemoryEventBusOptions {
  /** The broker to connect to; default a new private one (then nothing outlives this bus). */
  broker?: MemoryEventBroker;
  /** How long a delivered message may stay unsettled before it is delivered again. Default 30 s. */
  ackWaitMs?: number;
  /** Where malformed messages are reported. */
  logger?: Logger;
}

/** A bus over `options.broker`; synchronous, since there is nothing to connect to. */
export function createMemoryEventBus(options: MemoryEventBusOptions = {}): EventBus {
  const broker = options.broker ?? createMemoryEventBroker();
  const ackWaitMs = options.ackWaitMs ?? 30_000;
  const logger = options.logger ?? silentLogger;
  const closing = new AbortController();

  function assertOpen(): void {
    if (closing.signal.aborted) throw new ClawrlError('internal_error', 'the event bus is closed');
  }

  function iterate<E extends EventName>(event: E, options: SubscribeOptions): AsyncGenerator<BusMessage<EventPayloads[E]>> {
    return deliverMemoryMessages({
      consumer: broker.consumer(event, options.consumer),
      signal: options.signal ? AbortSignal.any([closing.signal, options.signal]) : closing.signal,
      ackWaitMs,
      decode: (data) => decodeEventPayload(event, data),
      onMalformed: (reason) => logger.warn('event bus dropped a malformed message', { event, consumer: options.consumer, reason }),
      assertOpen,
    });
  }

  return {
    async publish(event, payload) {
      assertOpen();
      broker.append(event, encodeEventPayload(event, payload));
    },
    subscribe(event, options) {
      checkEventName(event);
      checkConsumerName(options.consumer);
      assertOpen();
      return { [Symbol.asyncIterator]: () => iterate(event, options) };
    },
    async close() {
      // Unsettled deliveries stay with the broker and come again after their ack wait, as for a crashed client.
      closing.abort();
    },
  };
}
