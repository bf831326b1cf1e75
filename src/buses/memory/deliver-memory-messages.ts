/**
 * The subscription loop the in-memory event bus and task queue share: take the next delivery
 * from a durable consumer, decode it, settle and report a malformed one, and wrap the rest in a
 * message whose ack, nak and `working()` go back to the broker.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { BusMessage } from '../../spec/event-bus.js';
import type { DecodedPayload } from '../event-wire.js';
import type { MemoryConsumer, MemoryDelivery } from './memory-event-broker.js';

/** A bus message that can also restart its ack wait (the queue's `working()`; the event bus ignores it). */
export type MemoryMessage<Payload> = BusMessage<Payload> & { working(): Promise<void> };

export interface DeliverMemoryMessagesOptions<Payload> {
  consumer: MemoryConsumer;
  signal: AbortSignal;
  ackWaitMs: number;
  decode(data: Uint8Array): DecodedPayload<Payload>;
  onMalformed(reason: string): void;
  /** Throws once the bus or queue is closed: settling then fails, as on a lost connection. */
  assertOpen(): void;
}

export async function* deliverMemoryMessages<Payload>(options: DeliverMemoryMessagesOptions<Payload>): AsyncGenerator<MemoryMessage<Payload>> {
  const { consumer, signal } = options;
  while (!signal.aborted) {
    const delivery = await consumer.next(options.ackWaitMs, signal);
    if (!delivery) return;
    if (signal.aborted) {
      // Raced with the abort: give it straight back rather than make the group wait an ack wait.
      consumer.nak(delivery.sequence, 0);
      return;
    }
    const decoded = options.decode(delivery.data);
    if (!decoded.ok) {
      consumer.ack(delivery.sequence);
      options.onMalformed(decoded.reason);
      continue;
    }
    yield createMemoryMessage(decoded.payload, delivery, options);
  }
}

function createMemoryMessage<Payload>(payload: Payload, delivery: MemoryDelivery, options: DeliverMemoryMessagesOptions<Payload>): MemoryMessage<Payload> {
  const { consumer } = options;
  let settled = false;
  function settle(action: () => void, final: boolean): Promise<void> {
    if (settled) return Promise.resolve();
    try {
      options.assertOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    if (final) settled = true;
    action();
    return Promise.resolve();
  }
  return {
    payload,
    redeliveryCount: delivery.deliveryCount - 1,
    ack: () => settle(() => consumer.ack(delivery.sequence), true),
    nak: (delayMs = 0) => {
      if (!Number.isFinite(delayMs) || delayMs < 0) {
        return Promise.reject(new ClawrlError('invalid_request', `nak delay must be a non-negative number of ms, got ${delayMs}`));
      }
      return settle(() => consumer.nak(delivery.sequence, delayMs), true);
    },
    working: () => settle(() => consumer.touch(delivery.sequence, options.ackWaitMs), false),
  };
}
