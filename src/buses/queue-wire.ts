/**
 * What every task-queue adapter puts on and reads from its wire: JSON objects as UTF-8, checked
 * topics and deduplication ids. Shapes beyond "a JSON object" are the consumer's to check.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import { messageIdPattern, topicPattern } from '../spec/task-queue.js';
import type { QueuePayload } from '../spec/task-queue.js';
import type { DecodedPayload } from './event-wire.js';

/** The ack wait of both adapters when none is given: long enough for one rollout step between `working()` calls. */
export const defaultQueueAckWaitMs = 60_000;
/** The duplicate window of both adapters when none is given: a manager restarted within a day publishes no task twice. */
export const defaultQueueDuplicateWindowMs = 24 * 60 * 60 * 1000;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function isJsonObject(value: unknown): value is QueuePayload {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Serialises a payload; throws `ClawrlError('invalid_request')` for anything but a JSON object. */
export function encodeQueuePayload(payload: QueuePayload): Uint8Array {
  if (!isJsonObject(payload)) throw new ClawrlError('invalid_request', 'a queued message must be a JSON object', { param: 'payload' });
  return encoder.encode(JSON.stringify(payload));
}

/** Parses bytes from the wire; a malformed message is expected data (a foreign publisher), not an exception. */
export function decodeQueuePayload(data: Uint8Array): DecodedPayload<QueuePayload> {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch (error) {
    return { ok: false, reason: `not UTF-8 JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  return isJsonObject(value) ? { ok: true, payload: value } : { ok: false, reason: 'not a JSON object' };
}

/** Everything a publish checks before it touches the wire: the topic, the id, and the payload, encoded. */
export function encodeQueuePublish(topic: string, payload: QueuePayload, id: string | undefined): Uint8Array {
  checkTopic(topic);
  checkMessageId(id);
  return encodeQueuePayload(payload);
}

export function checkTopic(topic: string): void {
  if (typeof topic !== 'string' || !topicPattern.test(topic)) {
    throw new ClawrlError('invalid_request', `invalid topic "${String(topic)}": use dot-separated kebab-case tokens, e.g. tasks.tool-calc`, { param: 'topic' });
  }
}

export function checkMessageId(id: string | undefined): void {
  if (id !== undefined && (typeof id !== 'string' || !messageIdPattern.test(id))) {
    throw new ClawrlError('invalid_request', `invalid message id "${String(id)}": use 1-256 printable characters without spaces`, { param: 'id' });
  }
}
