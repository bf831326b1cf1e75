/**
 * The JetStream objects behind the NATS event bus: one stream holding every event, one subject
 * per event, and one durable pull consumer per (event, consumer name).
 */
import { AckPolicy, DeliverPolicy, DiscardPolicy, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { ConsumerConfig, JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { eventNames } from '../../spec/event-bus.js';
import type { EventName } from '../../spec/event-bus.js';

/** `turn-recorded` under prefix `clawrl` is published on `clawrl.turn.recorded`. */
export function natsSubjectOf(subjectPrefix: string, event: EventName): string {
  return `${subjectPrefix}.${event.replaceAll('-', '.')}`;
}

/** Event names contain no `_` and consumer names no `.`, so the durable name is unambiguous and legal. */
export function natsDurableNameOf(event: EventName, consumer: string): string {
  return `${event}_${consumer}`;
}

export interface NatsEventStreamOptions {
  streamName: string;
  subjectPrefix: string;
  maxMessagesPerEvent: number;
}

/**
 * Creates the stream, or brings an existing one to this configuration (subjects and limits),
 * so processes of a newer version can add events without a manual migration.
 */
export async function ensureNatsEventStream(manager: JetStreamManager, options: NatsEventStreamOptions): Promise<void> {
  const config = {
    name: options.streamName,
    subjects: eventNames.map((event) => natsSubjectOf(options.subjectPrefix, event)),
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_msgs_per_subject: options.maxMessagesPerEvent,
  } satisfies Partial<StreamConfig> & { name: string };
  try {
    const existing = await manager.streams.info(options.streamName).catch((error: unknown) => {
      if (isApiError(error, JetStreamApiCodes.StreamNotFound)) return null;
      throw error;
    });
    if (!existing) {
      await manager.streams.add(config);
      return;
    }
    const { name: _name, storage: _storage, retention: _retention, ...updatable } = config;
    await manager.streams.update(options.streamName, { ...existing.config, ...updatable });
  } catch (error) {
    throw new ClawrlError('configuration_error', `cannot create or update JetStream stream "${options.streamName}": ${messageOf(error)}`, {
      cause: error,
    });
  }
}

export interface NatsConsumerOptions {
  streamName: string;
  subjectPrefix: string;
  event: EventName;
  consumer: string;
  ackWaitMs: number;
}

/**
 * Creates the durable pull consumer, or updates its ack wait when it exists with another one
 * (a redeployment with a new setting). Returns the durable name.
 */
export async function ensureNatsConsumer(manager: JetStreamManager, options: NatsConsumerOptions): Promise<string> {
  const durableName = natsDurableNameOf(options.event, options.consumer);
  const config = {
    durable_name: durableName,
    filter_subject: natsSubjectOf(options.subjectPrefix, options.event),
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(options.ackWaitMs),
    // A consumer name seen for the first time starts at the oldest retained event, like the memory bus.
    deliver_policy: DeliverPolicy.All,
  } satisfies Partial<ConsumerConfig>;
  try {
    const existing = await manager.consumers.info(options.streamName, durableName).catch((error: unknown) => {
      if (isApiError(error, JetStreamApiCodes.ConsumerNotFound)) return null;
      throw error;
    });
    if (!existing) {
      await manager.consumers.add(options.streamName, config);
    } else if (existing.config.ack_wait !== config.ack_wait) {
      await manager.consumers.update(options.streamName, durableName, { ack_wait: config.ack_wait });
    }
    return durableName;
  } catch (error) {
    throw new ClawrlError('upstream_error', `cannot create JetStream consumer "${durableName}": ${messageOf(error)}`, {
      cause: error,
      retryable: true,
    });
  }
}

function isApiError(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
