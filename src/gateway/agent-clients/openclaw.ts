/**
 * OpenClaw (seen with `openclaw` 2026.9.6, `reference/openclaw-requests.md`):
 *
 * - It appends an internal context block as an extra user message on every turn and drops it on
 *   the next: environment noise, neither the user's reaction nor part of the conversation's root.
 * - It strips those markers from a reply it sends back.
 * - Its "Runtime:" line names `sessionId=<id>`.
 * - Side calls: heartbeat runs (which ask for HEARTBEAT.md and answer HEARTBEAT_OK), pre-compaction
 *   memory flushes, cron-triggered runs (only the newest user message is read: earlier turns of a
 *   main conversation may mention them), and compaction's summaries (its system prompt makes the
 *   model a "context summarization assistant").
 */
import type { ChatMessage } from '../../spec/chat.js';
import { newestOf, type AgentClient } from './agent-client.js';

const internalContextMarker = '<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>';
const internalContextMarkers = /<<<(?:BEGIN|END)_OPENCLAW_INTERNAL_CONTEXT>>>/g;

const sideUserPatterns: readonly RegExp[] = [/\bHEARTBEAT(?:_OK|\.md)\b/, /\bpre-compaction memory flush\b/i, /\bmemory flush\b/i, /^\s*\[cron(?::[^\]]*)?\]/i];
const compactionSystem = /^You are a context summarization assistant\b/;

function isEnvironmentNoise(message: ChatMessage): boolean {
  return message.role === 'user' && message.content.includes(internalContextMarker);
}

export const openClaw: AgentClient = {
  name: 'openclaw',
  isEnvironmentNoise,
  replyText: (content) => (content.includes('_OPENCLAW_INTERNAL_CONTEXT>>>') ? content.replace(internalContextMarkers, '') : content),
  sessionHint(messages) {
    for (const message of messages) {
      if (message.role !== 'user' && message.role !== 'system') continue;
      const match = /Runtime:[^\n]*\bsessionId=([A-Za-z0-9._:-]{1,128})/.exec(message.content);
      if (match?.[1]) return `openclaw-${match[1]}`;
    }
    return null;
  },
  isSideTurn(messages) {
    if (compactionSystem.test(messages.find((message) => message.role === 'system')?.content ?? '')) return true;
    // Only a user message after the last reply: a tool result or the reply itself means the conversation goes on.
    const last = newestOf(messages, isEnvironmentNoise);
    return last?.role === 'user' && sideUserPatterns.some((pattern) => pattern.test(last.content));
  },
};
