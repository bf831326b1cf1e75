/**
 * The JetStream objects behind the NATS event bus (one stream holding every event, one subject
 * per event, one durable pull consumer per (event, consumer name)) and the task queue (a stream
 * per topic), with the create-or-update helpers both use.
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
  await ensureNatsStream(manager, {
    name: options.streamName,
    subjects: eventNames.map((event) => natsSubjectOf(options.subjectPrefix, event)),
    maxMessagesPerSubject: options.maxMessagesPerEvent,
  });
}

export interface NatsStreamOptions {
  name: string;
  subjects: string[];
  maxMessagesPerSubject: number;
  /** How long the stream remembers `Nats-Msg-Id`s to drop duplicates; the server's default (2 min) when absent. */
  duplicateWindowMs?: number;
}

/** Creates a file-backed stream with limits retention, or brings an existing one to these subjects and limits. */
export async function ensureNatsStream(manager: JetStreamManager, options: NatsStreamOptions): Promise<void> {
  const config = {
    name: options.name,
    subjects: options.subjects,
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_msgs_per_subject: options.maxMessagesPerSubject,
    ...(options.duplicateWindowMs === undefined ? {} : { duplicate_window: nanos(options.duplicateWindowMs) }),
  } satisfies Partial<StreamConfig> & { name: string };
  try {
    const existing = await manager.streams.info(options.name).catch((error: unknown) => {
      if (isApiError(error, JetStreamApiCodes.StreamNotFound)) return null;
      throw error;
    });
    if (!existing) {
      await manager.streams.add(config);
      return;
    }
    const { name: _name, storage: _storage, retention: _retention, ...updatable } = config;
    await manager.streams.update(options.name, { ...existing.config, ...updatable });
  } catch (error) {
    throw new ClawrlError('configuration_error', `cannot create or update JetStream stream "${options.name}": ${messageOf(error)}`, {
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

/** Creates the event's durable pull consumer for `consumer` (see `ensureNatsDurableConsumer`); returns the durable name. */
export async function ensureNatsConsumer(manager: JetStreamManager, options: NatsConsumerOptions): Promise<string> {
  const durableName = natsDurableNameOf(options.event, options.consumer);
  await ensureNatsDurableConsumer(manager, {
    streamName: options.streamName,
    durableName,
    filterSubject: natsSubjectOf(options.subjectPrefix, options.event),
    ackWaitMs: options.ackWaitMs,
  });
  return durableName;
}

export interface NatsDurableConsumerOptions {
  streamName: string;
  durableName: string;
  filterSubject: string;
  ackWaitMs: number;
}

/**
 * Creates the durable pull consumer with explicit acks, or updates its ack wait when it exists
 * with another one (a redeployment with a new setting).
 */
export async function ensureNatsDurableConsumer(manager: JetStreamManager, options: NatsDurableConsumerOptions): Promise<void> {
  const { durableName } = options;
  const config = {
    durable_name: durableName,
    filter_subject: options.filterSubject,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(options.ackWaitMs),
    // A consumer name seen for the first time starts at the oldest retained message, like the memory bus.
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
