/**
 * The agent clients clawrl recognises, combined: a message is noise if any client says so, a
 * reply's text is what every client's stripping leaves, the first session hint wins, and a request
 * is a side turn if any client's rules say so. Default: main, as the design says.
 */
import type { ConversationRules } from '../../core/conversation.js';
import type { ChatMessage } from '../../spec/chat.js';
import type { TurnType } from '../../spec/records.js';
import type { AgentClient } from './agent-client.js';
import { claudeCode } from './claude-code.js';
import { openClaw } from './openclaw.js';

export const knownAgentClients: readonly AgentClient[] = [openClaw, claudeCode];

export const agentConversationRules: ConversationRules = {
  isEnvironmentNoise: (message) => knownAgentClients.some((client) => client.isEnvironmentNoise?.(message) === true),
  replyText: (content) => knownAgentClients.reduce((text, client) => client.replyText?.(text) ?? text, content),
};

export function agentSessionHint(messages: readonly ChatMessage[]): string | null {
  for (const client of knownAgentClients) {
    const hint = client.sessionHint?.(messages) ?? null;
    if (hint !== null) return hint;
  }
  return null;
}

/** The documented turn-type heuristic, used when no `X-Turn-Type` header is given. */
export function inferTurnType(messages: readonly ChatMessage[]): TurnType {
  return knownAgentClients.some((client) => client.isSideTurn?.(messages) === true) ? 'side' : 'main';
}
