/**
 * What the NATS event bus and task queue share: the first connect, and the subscription loop that
 * pulls one message at a time from a durable consumer.
 *
 * Subscribers pull one message at a time, when the caller asks for the next one, rather than
 * through `consume()`: `consume()` refills its buffer as messages arrive, not as they are
 * processed, so a slow or stuck subscriber (a trainer mid-step, a worker mid-rollout) would hoard
 * messages whose ack wait runs out in its buffer, and they would be delivered twice. Pulling on
 * demand starts each message's ack wait when its processing starts and lets an idle subscriber
 * take the rest.
 */
import type { Consumer, JsMsg } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { BusMessage } from '../../spec/event-bus.js';
import type { DecodedPayload } from '../event-wire.js';
import { messageOf } from './nats-event-stream.js';

/** How long one pull request waits on the server before it is renewed. */
const pullExpiresMs = 30_000;
/** Pause before pulling again after a failed pull (server restart, consumer deleted). */
const retryDelayMs = 1_000;

const aborted = Symbol('aborted');

/** A bus message that can also restart its ack wait (the queue's `working()`; the event bus ignores it). */
export type NatsMessage<Payload> = BusMessage<Payload> & { working(): Promise<void> };

export interface PullNatsMessagesOptions<Payload> {
  /** Opens (creates or binds) the durable consumer; called again after a failed pull. */
  openConsumer(): Promise<Consumer>;
  signal: AbortSignal;
  decode(data: Uint8Array): DecodedPayload<Payload>;
  onMalformed(reason: string): void;
  onPullFailure(reason: string): void;
  connection: NatsConnection;
  assertOpen(): void;
}

export async function* pullNatsMessages<Payload>(options: PullNatsMessagesOptions<Payload>): AsyncGenerator<NatsMessage<Payload>> {
  const { signal } = options;
  let consumer: Consumer | null = null;
  while (!signal.aborted) {
    let received: JsMsg | null | typeof aborted;
    try {
      if (!consumer) {
        const opened = await raceAbort(options.openConsumer(), signal);
        if (opened === aborted) return;
        consumer = opened;
      }
      // A message that arrives after the abort goes straight back to the consumer.
      received = await raceAbort(consumer.next({ expires: pullExpiresMs }), signal, (late) => late?.nak());
    } catch (error) {
      if (signal.aborted) return;
      options.onPullFailure(messageOf(error));
      consumer = null;
      if ((await raceAbort(delay(retryDelayMs), signal)) === aborted) return;
      continue;
    }
    if (received === aborted) return;
    if (received === null) continue;
    const decoded = options.decode(received.data);
    if (!decoded.ok) {
      received.term();
      options.onMalformed(decoded.reason);
      continue;
    }
    yield createMessage(decoded.payload, received, options.connection, options.assertOpen);
  }
}

/** Connects; fails with a retryable `ClawrlError` when NATS is unreachable. */
export async function connectToNats(servers: string | string[], name: string, timeoutMs: number): Promise<NatsConnection> {
  try {
    // A long-running service keeps reconnecting; only the first connect fails fast.
    return await connect({ servers, name, maxReconnectAttempts: -1, timeout: timeoutMs });
  } catch (error) {
    throw new ClawrlError('upstream_error', `cannot reach NATS at ${String(servers)}: ${messageOf(error)}`, { cause: error, retryable: true });
  }
}

function createMessage<Payload>(payload: Payload, received: JsMsg, connection: NatsConnection, assertOpen: () => void): NatsMessage<Payload> {
  let settled = false;
  async function settle(action: () => Promise<unknown>, final = true): Promise<void> {
    if (settled) return;
    assertOpen();
    if (final) settled = true;
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
    // The in-progress ack restarts the server's ack wait; flushed so it is on the wire before the work goes on.
    working: () =>
      settle(() => {
        received.working();
        return connection.flush();
      }, false),
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
