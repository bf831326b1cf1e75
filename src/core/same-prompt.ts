/**
 * Whether two requests ask the same thing: the same messages (role, content, tool calls, the tool
 * result's call id and name) and the same tools. It is how a retry is told from a new turn: an agent
 * SDK that timed out sends its request again unchanged, while any new turn adds a message. What a
 * client sends only for the record (provider fields, reasoning) is left out, and so is key order and
 * an absent field against an undefined one, so a request compares equal to its stored copy.
 */
import type { ChatMessage, ToolDefinition } from '../spec/chat.js';

export interface Prompt {
  messages: readonly ChatMessage[];
  tools: readonly ToolDefinition[];
}

/** Equal JSON values, whatever the order of their keys; a key whose value is undefined counts as absent. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => sameValue(item, b[index]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) if (!sameValue(left[key], right[key])) return false;
  return true;
}

function sameMessage(a: ChatMessage, b: ChatMessage): boolean {
  return (
    a.role === b.role &&
    a.content === b.content &&
    a.toolCallId === b.toolCallId &&
    a.name === b.name &&
    sameValue(a.toolCalls ?? [], b.toolCalls ?? [])
  );
}

export function isSamePrompt(a: Prompt, b: Prompt): boolean {
  if (a.messages.length !== b.messages.length || a.tools.length !== b.tools.length) return false;
  return a.messages.every((message, index) => sameMessage(message, b.messages[index] as ChatMessage)) && sameValue(a.tools, b.tools);
}
