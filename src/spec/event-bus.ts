/**
 * The `EventBus` seam: how the gateway, judge, sample builder and trainer tell each other that
 * something happened. Every arrow of the architecture is one event name below. Events are
 * notifications, not data: the record store is the source of truth, so a payload carries ids and
 * a consumer reads the record it points to.
 *
 * Implementations: in-memory (one process, the default) and NATS JetStream (distributed mode).
 * Every implementation runs `runEventBusContract` from `src/buses/event-bus.contract.ts`.
 *
 * Delivery contract:
 * - `publish` resolves once the bus has durably accepted the event (JetStream: the publish ack).
 * - Delivery is at least once. A subscriber settles each message with `ack` or `nak`; a message
 *   that is not settled within the bus's ack wait (the subscriber crashed, hung or closed) is
 *   delivered again. Consumers must therefore be idempotent.
 * - Consumers are durable and named: a consumer name resumes where it left off after a restart,
 *   and a consumer name seen for the first time starts at the oldest event the bus still retains.
 * - Subscribers that share a consumer name share the work (each message goes to one of them);
 *   different consumer names each get every message (fan-out).
 * - Payloads are validated on receive with the schemas below; a malformed message is settled
 *   (never redelivered), reported, and never yielded.
 */
import { z } from 'zod';
import type { PolicyVersion } from './inference-engine.js';

/** What each event carries, by event name (kebab-case noun-action). */
export interface EventPayloads {
  /** The gateway recorded a main-line turn; the judge may score it once its next state is linked. */
  'turn-recorded': { turnId: string; sessionId: string };
  /** A turn got its score (judge or explicit feedback), in [-1, 1]. */
  'turn-scored': { turnId: string; score: number };
  /** A training sample is ready, built from turns served by `policyVersion`. */
  'sample-available': { sampleId: string; policyVersion: PolicyVersion };
  /** The trainer published a new policy version; its artifact is in the record store. */
  'policy-published': { version: PolicyVersion };
}

export type EventName = keyof EventPayloads;

const policyVersionSchema = z.number().int().nonnegative();

/**
 * The wire schemas, one per event. Unknown fields are dropped rather than rejected, so a newer
 * publisher that adds a field does not break an older consumer during a rolling upgrade.
 */
export const eventPayloadSchemas: { readonly [E in EventName]: z.ZodType<EventPayloads[E]> } = {
  'turn-recorded': z.object({ turnId: z.string().min(1), sessionId: z.string().min(1) }),
  'turn-scored': z.object({ turnId: z.string().min(1), score: z.number().min(-1).max(1) }),
  'sample-available': z.object({ sampleId: z.string().min(1), policyVersion: policyVersionSchema }),
  'policy-published': z.object({ version: policyVersionSchema }),
};

/** Every event name, in pipeline order; complete by construction, since every event has a schema. */
export const eventNames = Object.keys(eventPayloadSchemas) as readonly EventName[];

/**
 * Consumer names become part of broker object names (JetStream durable names), so they are
 * restricted to letters, digits, `_` and `-`, at most 64 characters.
 */
export const consumerNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** One delivery of one event to one subscriber. */
export interface BusMessage<Payload> {
  /** The validated payload. */
  readonly payload: Payload;
  /** 0 on the first delivery; counts the deliveries before this one (nak, ack-wait expiry). */
  readonly redeliveryCount: number;
  /**
   * Marks the message processed: this consumer name never gets it again. Resolves once the bus
   * has recorded the ack. Settling twice is a no-op; rejects with a `ClawrlError` when the bus
   * is closed (the message will then come again after the ack wait).
   */
  ack(): Promise<void>;
  /**
   * Gives the message back for redelivery to this consumer name, after `delayMs` (default 0).
   * Settling twice is a no-op; rejects with a `ClawrlError` when the bus is closed.
   */
  nak(delayMs?: number): Promise<void>;
}

export interface SubscribeOptions {
  /** The durable consumer name (see `consumerNamePattern`); the same name shares the work. */
  consumer: string;
  /** Aborting ends the iteration; messages received but not settled come again after the ack wait. */
  signal?: AbortSignal;
}

export interface EventBus {
  /**
   * Publishes one event. Resolves when the bus has durably accepted it; rejects with
   * `ClawrlError('invalid_request')` for a payload that fails its schema, with a retryable
   * `ClawrlError` when the broker is unreachable, and with a `ClawrlError` once the bus is closed.
   */
  publish<E extends EventName>(event: E, payload: EventPayloads[E]): Promise<void>;
  /**
   * The messages of one event for one durable consumer, in publish order except for
   * redeliveries. The iteration ends when `signal` aborts, when the caller breaks out of it, or
   * when the bus closes. Throws a `ClawrlError` at once for a bad consumer name
   * (`invalid_request`) or a closed bus.
   */
  subscribe<E extends EventName>(event: E, options: SubscribeOptions): AsyncIterable<BusMessage<EventPayloads[E]>>;
  /** Ends every subscription and releases the connection. Idempotent. */
  close(): Promise<void>;
}
