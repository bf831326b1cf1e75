/**
 * Erases the events of erased records from the NATS event stream. The stream keeps events for
 * days (limits retention), and an event names a turn, its session and its samples by id — ids a
 * user may have chosen (`X-Session-Id`) — so an erasure must not leave them there. Each event that
 * names an erased id is deleted with JetStream's erase (the stored bytes overwritten), found by
 * reading the stream through an ordered consumer, which acks nothing and moves no durable consumer.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { messageOf } from './nats-event-stream.js';
import { connectToNats } from './pull-nats-messages.js';

export interface EraseNatsEventsOptions {
  servers: string | string[];
  /** Default `clawrl`. */
  streamName?: string;
  /** Default 5 s. */
  connectTimeoutMs?: number;
}

/** The ids whose events go. */
export interface ErasedEventIds {
  sessionIds: readonly string[];
  turnIds: readonly string[];
  sampleIds: readonly string[];
}

const batch = 256;

function namesErased(data: Uint8Array, ids: ReadonlySet<string>): boolean {
  try {
    const payload = JSON.parse(new TextDecoder().decode(data)) as Record<string, unknown>;
    return ['sessionId', 'turnId', 'sampleId'].some((field) => typeof payload[field] === 'string' && ids.has(payload[field]));
  } catch {
    // Not an event this clawrl wrote; it names nothing of ours.
    return false;
  }
}

/** Erases every retained event naming one of `ids`; returns how many went. */
export async function eraseNatsEvents(options: EraseNatsEventsOptions, erased: ErasedEventIds): Promise<number> {
  const ids = new Set([...erased.sessionIds, ...erased.turnIds, ...erased.sampleIds]);
  if (ids.size === 0) return 0;
  const streamName = options.streamName ?? 'clawrl';
  const connection = await connectToNats(options.servers, 'clawrl-erasure', options.connectTimeoutMs ?? 5_000);
  try {
    const manager = await jetstreamManager(connection);
    const info = await manager.streams.info(streamName);
    const last = info.state.last_seq;
    if (info.state.messages === 0) return 0;
    const consumer = await jetstream(connection).consumers.get(streamName);
    const matching: number[] = [];
    for (let seen = info.state.first_seq - 1; seen < last; ) {
      const messages = await consumer.fetch({ max_messages: batch, expires: 2_000 });
      let fetched = 0;
      for await (const message of messages) {
        fetched += 1;
        seen = message.seq;
        if (message.seq <= last && namesErased(message.data, ids)) matching.push(message.seq);
        if (seen >= last) break;
      }
      if (fetched === 0) break;
    }
    for (const sequence of matching) await manager.streams.deleteMessage(streamName, sequence, true);
    return matching.length;
  } catch (error) {
    throw new ClawrlError('upstream_error', `erasing events from the NATS stream ${streamName} failed: ${messageOf(error)}`, { cause: error, retryable: true });
  } finally {
    await connection.close();
  }
}
