/**
 * The `TaskQueue` seam: work queues on topics named at run time (`tasks.arithmetic`,
 * `results.tool-calc`), for the manager/worker loop of agentic RL. The `EventBus` is typed by a
 * fixed set of events whose payloads are ids; a queue carries whole JSON documents (a task, a
 * result) on topics that come and go with environments, so it is its own small seam beside it.
 *
 * Implementations: in-memory (one process, tests) and NATS JetStream (one stream per topic).
 * Every implementation runs `runTaskQueueContract` from `src/buses/task-queue.contract.ts`.
 *
 * Delivery contract (as the event bus's, `src/spec/event-bus.ts`, plus two things a queue needs):
 * - `publish` resolves once the queue has durably accepted the message.
 * - At least once: a message not settled within the ack wait is delivered again; a subscriber
 *   still working on one calls `working()` to restart its ack wait, so only a dead or stuck
 *   subscriber loses its message to another.
 * - Durable, named consumers: a name resumes where it left off; a new name starts at the oldest
 *   retained message; subscribers sharing a name share the work; different names fan out.
 * - Deduplication: a message published with an `id` that the topic already accepted within the
 *   queue's duplicate window is dropped (`{ duplicate: true }`), so a publisher that retries, or
 *   two workers that solved the same redelivered task, put it on the topic once.
 * - A message that is not a JSON object is settled, reported and never yielded; checking the
 *   object's shape is the consumer's job (its own zod schema).
 */
import type { BusMessage, SubscribeOptions } from './event-bus.js';

/**
 * Topics are dot-separated kebab-case tokens (`tasks.tool-calc`), so they map onto NATS subjects
 * and stream names without escaping; at most 128 characters.
 */
export const topicPattern = /^(?=.{1,128}$)[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)*$/;

/** Message ids for deduplication: printable, no spaces, at most 256 characters. */
export const messageIdPattern = /^[\x21-\x7e]{1,256}$/;

export type QueuePayload = Record<string, unknown>;

export interface QueuePublishOptions {
  /** Deduplication id (see `messageIdPattern`): the topic accepts one message per id within the duplicate window. */
  id?: string;
}

export interface QueuePublishResult {
  /** True when the topic had already accepted a message with this id, and dropped this one. */
  duplicate: boolean;
}

/** One delivery of one queued message to one subscriber. */
export interface QueueMessage extends BusMessage<QueuePayload> {
  /**
   * Restarts this message's ack wait: the subscriber is alive and still on it. A no-op once the
   * message is settled; rejects with a `ClawrlError` when the queue is closed.
   */
  working(): Promise<void>;
}

export interface TaskQueue {
  /** How long a delivered message may stay unsettled (without `working()`) before it is delivered again. */
  readonly ackWaitMs: number;
  /**
   * Publishes one JSON object on a topic. Rejects with `ClawrlError('invalid_request')` for a bad
   * topic, id or payload, with a retryable `ClawrlError` when the broker is unreachable, and with
   * a `ClawrlError` once the queue is closed.
   */
  publish(topic: string, payload: QueuePayload, options?: QueuePublishOptions): Promise<QueuePublishResult>;
  /**
   * The messages of one topic for one durable consumer, in publish order except for
   * redeliveries. Ends when `signal` aborts, the caller breaks out, or the queue closes. Throws a
   * `ClawrlError` at once for a bad topic or consumer name, or a closed queue.
   */
  consume(topic: string, options: SubscribeOptions): AsyncIterable<QueueMessage>;
  /** Ends every subscription and releases the connection. Idempotent. */
  close(): Promise<void>;
}
