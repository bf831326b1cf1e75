/**
 * Redaction over the domain's chat types: every text a message carries (content, reasoning, tool
 * call arguments, and the strings inside what the client sent beside them) goes through the
 * redactor. Tool-call arguments stay valid JSON: a placeholder holds no quote or backslash, and a
 * span never ends inside an escape. Roles, names and ids are kept: they are the conversation's
 * shape, and tool names come from the agent's own definitions.
 */
import type { ChatMessage, ToolCall } from '../../spec/chat.js';
import type { Redactor } from './create-redactor.js';

/** What a redaction changed, counted by kind. */
export interface RedactionTally {
  /** Spans replaced, in all. */
  count: number;
  /** Spans replaced by kind (`email`: 2, ...). */
  kinds: Record<string, number>;
}

export interface RedactedMessages {
  messages: ChatMessage[];
  tally: RedactionTally;
}

export function emptyTally(): RedactionTally {
  return { count: 0, kinds: {} };
}

/** Adds `from` into `into` and returns it. */
export function addTally(into: RedactionTally, from: RedactionTally): RedactionTally {
  into.count += from.count;
  for (const [kind, count] of Object.entries(from.kinds)) into.kinds[kind] = (into.kinds[kind] ?? 0) + count;
  return into;
}

/** The text redacted, counting its spans into `tally`. */
export function redactCounted(redactor: Redactor, text: string, tally: RedactionTally): string {
  const result = redactor.redact(text);
  for (const span of result.spans) {
    tally.count += 1;
    tally.kinds[span.kind] = (tally.kinds[span.kind] ?? 0) + 1;
  }
  return result.text;
}

/** Strings inside any JSON-shaped value redacted; the rest kept as it is. */
function redactValue(redactor: Redactor, value: unknown, tally: RedactionTally): unknown {
  if (typeof value === 'string') return redactCounted(redactor, value, tally);
  if (Array.isArray(value)) return value.map((item) => redactValue(redactor, item, tally));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValue(redactor, item, tally)]));
  }
  return value;
}

function redactToolCalls(redactor: Redactor, calls: ToolCall[], tally: RedactionTally): ToolCall[] {
  return calls.map((call) => ({ ...call, arguments: redactCounted(redactor, call.arguments, tally) }));
}

/** One message with its secrets replaced; the same object when nothing was found. */
export function redactMessage(redactor: Redactor, message: ChatMessage, tally: RedactionTally = emptyTally()): ChatMessage {
  const before = tally.count;
  const redacted: ChatMessage = { ...message, content: redactCounted(redactor, message.content, tally) };
  if (message.toolCalls !== undefined) redacted.toolCalls = redactToolCalls(redactor, message.toolCalls, tally);
  if (message.reasoning !== undefined) redacted.reasoning = redactCounted(redactor, message.reasoning, tally);
  if (message.providerFields !== undefined) redacted.providerFields = redactValue(redactor, message.providerFields, tally) as Record<string, unknown>[];
  return tally.count === before ? message : redacted;
}

/** Every message redacted; messages without a finding are kept as they were. */
export function redactMessages(redactor: Redactor, messages: readonly ChatMessage[]): RedactedMessages {
  const tally = emptyTally();
  return { messages: messages.map((message) => redactMessage(redactor, message, tally)), tally };
}
