/** Reads one string argument of a model's tool call, or says in the tool's own words why it cannot. */
import type { ToolCall } from '../../spec/chat.js';

export type StringToolArgument = { ok: true; value: string } | { ok: false; error: string };

export function stringToolArgument(call: ToolCall, key: string): StringToolArgument {
  const usage = `call ${call.name} with {"${key}": "..."}`;
  let value: unknown;
  try {
    value = (JSON.parse(call.arguments) as Record<string, unknown> | null)?.[key];
  } catch {
    return { ok: false, error: `error: the arguments are not JSON; ${usage}` };
  }
  if (typeof value !== 'string' || value.trim() === '') return { ok: false, error: `error: missing "${key}"; ${usage}` };
  return { ok: true, value };
}
