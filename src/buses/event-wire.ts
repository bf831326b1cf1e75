/**
 * What every bus adapter puts on and reads from its wire: event payloads as UTF-8 JSON checked
 * against the spec's schemas, and checked consumer names. The in-memory bus encodes too, so the
 * one-process default exercises the same validation path as NATS.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import { consumerNamePattern, eventNames, eventPayloadSchemas } from '../spec/event-bus.js';
import type { EventName, EventPayloads } from '../spec/event-bus.js';

/** A payload read off the wire, or why it is malformed. */
export type DecodedPayload<Payload> = { ok: true; payload: Payload } | { ok: false; reason: string };

export type DecodedEventPayload<E extends EventName> = DecodedPayload<EventPayloads[E]>;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Validates and serialises a payload; throws `ClawrlError('invalid_request')` when it fails its schema. */
export function encodeEventPayload<E extends EventName>(event: E, payload: EventPayloads[E]): Uint8Array {
  checkEventName(event);
  const parsed = eventPayloadSchemas[event].safeParse(payload);
  if (!parsed.success) {
    throw new ClawrlError('invalid_request', `invalid ${event} payload: ${describeIssues(parsed.error.issues)}`, { param: 'payload' });
  }
  return encoder.encode(JSON.stringify(parsed.data));
}

/** Parses bytes from the wire. A malformed message is expected data (a buggy or foreign publisher), not an exception. */
export function decodeEventPayload<E extends EventName>(event: E, data: Uint8Array): DecodedEventPayload<E> {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch (error) {
    return { ok: false, reason: `not UTF-8 JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  const parsed = eventPayloadSchemas[event].safeParse(value);
  return parsed.success ? { ok: true, payload: parsed.data } : { ok: false, reason: describeIssues(parsed.error.issues) };
}

export function checkEventName(event: string): asserts event is EventName {
  if (!(eventNames as readonly string[]).includes(event)) {
    throw new ClawrlError('invalid_request', `unknown event "${event}"; expected one of ${eventNames.join(', ')}`, { param: 'event' });
  }
}

export function checkConsumerName(consumer: string): void {
  if (typeof consumer !== 'string' || !consumerNamePattern.test(consumer)) {
    throw new ClawrlError('invalid_request', `invalid consumer name "${String(consumer)}": use 1-64 letters, digits, "_" or "-"`, {
      param: 'consumer',
    });
  }
}

function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`).join('; ');
}
