/**
 * Attributes a request to a session, first match wins: `X-Session-Id` header, `/s/{id}/v1/...`
 * prefix, body `session_id`, the session of the turn a protocol continues by id (a Responses
 * `previous_response_id`), a session the agent client names (`agent-clients/`: OpenClaw's runtime `sessionId=` line), then the conversation itself
 * (a quoted earlier reply of this server, found through the record store so that every gateway
 * replica and restart agrees), else a new session.
 */
import { conversationRootOf, quotedReplyKeys } from '../core/conversation.js';
import { agentConversationRules, agentSessionHint } from './agent-clients/known-agent-clients.js';
import type { ChatMessage } from '../spec/chat.js';
import type { TurnLog } from '../spec/turn-log.js';
import type { SessionSource } from '../spec/records.js';

export interface SessionResolution {
  sessionId: string;
  source: SessionSource;
  conversationRoot: string;
}

/** Only the newest replies are tried: a continuing conversation quotes the last one. */
const quotedRepliesTried = 3;

export async function resolveSession(input: {
  store: TurnLog;
  messages: readonly ChatMessage[];
  headerSessionId: string | undefined;
  pathSessionId: string | undefined;
  bodySessionId: string | undefined;
  continuedSessionId?: string | undefined;
  createId: (prefix: string) => string;
}): Promise<SessionResolution> {
  const conversationRoot = conversationRootOf(input.messages, agentConversationRules);
  const explicit = input.headerSessionId?.trim();
  if (explicit) return { sessionId: explicit, source: 'header', conversationRoot };
  if (input.pathSessionId) return { sessionId: input.pathSessionId, source: 'path', conversationRoot };
  const fromBody = input.bodySessionId?.trim();
  if (fromBody) return { sessionId: fromBody, source: 'header', conversationRoot };
  if (input.continuedSessionId) return { sessionId: input.continuedSessionId, source: 'inferred', conversationRoot };
  const hinted = agentSessionHint(input.messages);
  if (hinted !== null) return { sessionId: hinted, source: 'inferred', conversationRoot };
  for (const quoted of quotedReplyKeys(input.messages, conversationRoot, quotedRepliesTried, agentConversationRules)) {
    const found = await input.store.findByReplyKey(quoted.key);
    if (found !== null) return { sessionId: found.sessionId, source: 'inferred', conversationRoot };
  }
  return { sessionId: input.createId('session'), source: 'new', conversationRoot };
}
