/**
 * Pure functions over a conversation as an agent sends it: where the previous reply is, what
 * followed it (the next state), which session it continues and whether it is side traffic.
 * Nothing here performs I/O; hashing is deterministic computation.
 */
import { createHash, type Hash } from 'node:crypto';
import type { ChatMessage } from '../spec/chat.js';
import type { TurnType } from '../spec/records.js';

/**
 * OpenClaw appends an internal context block as an extra user message on every turn and drops it
 * on the next one. It is environment noise: not the user's reaction, not a stable part of the
 * conversation.
 */
const internalContextMarker = '<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>';

const internalContextMarkers = /<<<(?:BEGIN|END)_OPENCLAW_INTERNAL_CONTEXT>>>/g;

export function isEnvironmentNoise(message: ChatMessage): boolean {
  return message.role === 'user' && message.content.includes(internalContextMarker);
}

export function lastAssistantIndex(messages: readonly ChatMessage[]): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    if (messages[index]?.role === 'assistant') return index;
  }
  return -1;
}

/** Tool-call arguments compared by meaning: clients may re-serialize the JSON they received. */
function canonicalArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text.trim();
  }
}

/**
 * A digest of the conversation's root: its system prompt and first real user message. It stays
 * the same for every turn of a conversation, even when the agent drops internal context blocks.
 */
export function conversationRootOf(messages: readonly ChatMessage[]): string {
  const system = messages.find((message) => message.role === 'system')?.content ?? '';
  const firstUser =
    messages.find((message) => message.role === 'user' && !isEnvironmentNoise(message))?.content ?? '';
  return hashAfterSystem(system).copy().update('\u0001').update(firstUser).digest('base64url');
}

/**
 * Hash states that have consumed a system prompt, most recently used last. Every turn of an
 * agent resends the same ~40 KB prompt; continuing a copy of its state costs a fifth of hashing it.
 */
const systemHashes = new Map<string, Hash>();
const systemHashLimit = 64;

function hashAfterSystem(system: string): Hash {
  const known = systemHashes.get(system);
  if (known !== undefined) {
    systemHashes.delete(system);
    systemHashes.set(system, known);
    return known;
  }
  const hash = createHash('sha256').update(system);
  systemHashes.set(system, hash);
  if (systemHashes.size > systemHashLimit) systemHashes.delete(systemHashes.keys().next().value as string);
  return hash;
}

/**
 * The key under which a reply is found again when a later request quotes it. It binds the reply
 * to the conversation's root, so two sessions that receive the same short reply ("Hello!") to
 * different openings are not confused.
 */
export function replyKeyOf(conversationRoot: string, reply: ChatMessage): string {
  // OpenClaw strips its internal-context markers from a reply it sends back (seen with 2026.9.6).
  const content = reply.content.includes('_OPENCLAW_INTERNAL_CONTEXT>>>') ? reply.content.replace(internalContextMarkers, '') : reply.content;
  const toolCalls = (reply.toolCalls ?? []).map((call) => `${call.name}\u0000${canonicalArguments(call.arguments)}`);
  return createHash('sha256')
    .update(conversationRoot)
    .update('\u0001')
    .update(content.trim())
    .update('\u0001')
    .update(toolCalls.join('\u0002'))
    .digest('base64url');
}

/** Reply keys of the newest `limit` assistant messages in a request, newest first, with their positions. */
export function quotedReplyKeys(
  messages: readonly ChatMessage[],
  conversationRoot: string,
  limit = Number.POSITIVE_INFINITY,
): Array<{ index: number; key: string }> {
  const keys: Array<{ index: number; key: string }> = [];
  for (let index = messages.length - 1; index >= 0 && keys.length < limit; index -= 1) {
    const message = messages[index];
    if (message?.role === 'assistant') keys.push({ index, key: replyKeyOf(conversationRoot, message) });
  }
  return keys;
}

/** Where a request quotes the reply with this key, searching newest first; -1 when it does not. */
export function quotedReplyIndex(messages: readonly ChatMessage[], conversationRoot: string, replyKey: string): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role === 'assistant' && replyKeyOf(conversationRoot, message) === replyKey) return index;
  }
  return -1;
}

/**
 * The next state of the turn whose reply sits at `replyIndex`: everything after it (the user's
 * reply, tool results), without OpenClaw's internal context blocks.
 */
export function nextStateAfter(messages: readonly ChatMessage[], replyIndex: number): ChatMessage[] {
  return messages.slice(replyIndex + 1).filter((message) => !isEnvironmentNoise(message));
}

/** OpenClaw puts `sessionId=<id>` on its "Runtime:" line; a reliable hint when present. */
export function openClawSessionHint(messages: readonly ChatMessage[]): string | null {
  for (const message of messages) {
    if (message.role !== 'user' && message.role !== 'system') continue;
    const match = /Runtime:[^\n]*\bsessionId=([A-Za-z0-9._:-]{1,128})/.exec(message.content);
    if (match?.[1]) return match[1];
  }
  return null;
}

/**
 * Side-traffic patterns of OpenClaw: heartbeat runs (which ask the model to read HEARTBEAT.md and
 * answer HEARTBEAT_OK), pre-compaction memory flushes and cron-triggered runs. Only the newest
 * user message is inspected, because earlier turns of a main conversation may mention them.
 */
const sidePatterns: readonly RegExp[] = [
  /\bHEARTBEAT(?:_OK|\.md)\b/,
  /\bpre-compaction memory flush\b/i,
  /\bmemory flush\b/i,
  /^\s*\[cron(?::[^\]]*)?\]/i,
];

/** The documented turn-type heuristic, used when no `X-Turn-Type` header is given. */
export function inferTurnType(messages: readonly ChatMessage[]): TurnType {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message === undefined || message.role === 'assistant' || message.role === 'tool') break;
    if (message.role !== 'user' || isEnvironmentNoise(message)) continue;
    return sidePatterns.some((pattern) => pattern.test(message.content)) ? 'side' : 'main';
  }
  return 'main';
}

const truthyValues = new Set(['1', 'true', 'yes', 'on']);

export function isTruthyFlag(value: string | undefined | null): boolean {
  return value !== undefined && value !== null && truthyValues.has(value.trim().toLowerCase());
}

export function parseTurnType(value: string | undefined | null): TurnType | null {
  const normalized = value?.trim().toLowerCase();
  return normalized === 'main' || normalized === 'side' ? normalized : null;
}
