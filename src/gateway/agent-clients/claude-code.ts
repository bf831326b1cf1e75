/**
 * Claude Code (seen with `@anthropic-ai/claude-code` 2.1.197, `claude -p`):
 *
 * - Side calls: the session title it asks its small model for, beside the main request (system
 *   prompt "Generate a concise, sentence-case title (3-7 words) ...", the first message in a
 *   `<session>` block).
 * - It sends its instructions as `system` messages inside `messages` too; they are part of the
 *   conversation (the Messages route keeps them in place).
 */
import { type AgentClient } from './agent-client.js';

const titleRequest = /Generate a concise, sentence-case title \(3-7 words\)/;

export const claudeCode: AgentClient = {
  name: 'claude-code',
  isSideTurn(messages) {
    return titleRequest.test(messages.find((message) => message.role === 'system')?.content ?? '');
  },
};
