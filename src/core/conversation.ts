/**
 * Pure functions over a conversation as an agent sends it: where the previous reply is, what
 * followed it (the next state), which session it continues and whether it is side traffic.
 * Nothing here performs I/O; hashing is deterministic computation.
 */
import { createHash, type Hash } from 'node:crypto';
import type { ChatMessage } from '../spec/chat.js';
import type { TurnType } from '../spec/records.js';

/**
 * What an agent client adds to a conversation that is not the conversation, and what it changes
 * in a reply it sends back. The rules of each client live with the gateway
 * (`gateway/agent-clients/`); these functions only apply them.
 */
export interface ConversationRules {
  /** A message the client adds on its own (environment, not the user's words): no part of a root or a next state. */
  isEnvironmentNoise(message: ChatMessage): boolean;
  /** A reply's text as the server sent it, with what a client strips when it sends it back taken out of both. */
  replyText(content: string): string;
}

/** A conversation with no client's additions. */
export const plainConversation: ConversationRules = { isEnvironmentNoise: () => false, replyText: (content) => content };

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
export function conversationRootOf(messages: readonly ChatMessage[], rules: ConversationRules = plainConversation): string {
  const system = messages.find((message) => message.role === 'system')?.content ?? '';
  const firstUser =
    messages.find((message) => message.role === 'user' && !rules.isEnvironmentNoise(message))?.content ?? '';
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
export function replyKeyOf(conversationRoot: string, reply: ChatMessage, rules: ConversationRules = plainConversation): string {
  const content = rules.replyText(reply.content);
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
  rules: ConversationRules = plainConversation,
): Array<{ index: number; key: string }> {
  const keys: Array<{ index: number; key: string }> = [];
  for (let index = messages.length - 1; index >= 0 && keys.length < limit; index -= 1) {
    const message = messages[index];
    if (message?.role === 'assistant') keys.push({ index, key: replyKeyOf(conversationRoot, message, rules) });
  }
  return keys;
}

/** Where a request quotes the reply with this key, searching newest first; -1 when it does not. */
export function quotedReplyIndex(messages: readonly ChatMessage[], conversationRoot: string, replyKey: string, rules: ConversationRules = plainConversation): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role === 'assistant' && replyKeyOf(conversationRoot, message, rules) === replyKey) return index;
  }
  return -1;
}

/**
 * The next state of the turn whose reply sits at `replyIndex`: everything after it (the user's
 * reply, tool results), without the client's own additions.
 */
export function nextStateAfter(messages: readonly ChatMessage[], replyIndex: number, rules: ConversationRules = plainConversation): ChatMessage[] {
  return messages.slice(replyIndex + 1).filter((message) => !rules.isEnvironmentNoise(message));
}

const truthyValues = new Set(['1', 'true', 'yes', 'on']);

export function isTruthyFlag(value: string | undefined | null): boolean {
  return value !== undefined && value !== null && truthyValues.has(value.trim().toLowerCase());
}

export function parseTurnType(value: string | undefined | null): TurnType | null {
  const normalized = value?.trim().toLowerCase();
  return normalized === 'main' || normalized === 'side' ? normalized : null;
}
