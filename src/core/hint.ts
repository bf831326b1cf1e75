/**
 * The hint format: OPD's teacher sees the hint appended to the last user message as
 * `"\n\n[user's hint / instruction]\n" + hint` (as in OpenClaw-RL). The built-in model is trained
 * on the same format, so its teacher prompts read like its training data.
 */
import type { ChatMessage } from '../spec/chat.js';

export const hintMarker = "[user's hint / instruction]";
export const hintSeparator = `\n\n${hintMarker}\n`;

/**
 * Returns new messages with the hint appended to the last user message. With no user message
 * at all, a new user message `"[user's hint / instruction]\n" + hint` is appended instead (no
 * leading blank lines, since there is nothing to separate it from). A blank hint returns an
 * unchanged copy. The input array and its messages are never mutated.
 */
export function appendHint(messages: readonly ChatMessage[], hint: string): ChatMessage[] {
  const copy = messages.map((message) => ({ ...message }));
  const trimmed = hint.trim();
  if (trimmed === '') return copy;
  for (let index = copy.length - 1; index >= 0; index -= 1) {
    const message = copy[index] as ChatMessage;
    if (message.role === 'user') {
      copy[index] = { ...message, content: message.content + hintSeparator + trimmed };
      return copy;
    }
  }
  copy.push({ role: 'user', content: `${hintMarker}\n${trimmed}` });
  return copy;
}

/** Splits a user message into its text and the hint appended last (null when there is none). */
export function splitHint(text: string): { text: string; hint: string | null } {
  const index = text.lastIndexOf(hintSeparator);
  if (index >= 0) return { text: text.slice(0, index), hint: text.slice(index + hintSeparator.length) };
  if (text.startsWith(`${hintMarker}\n`)) return { text: '', hint: text.slice(hintMarker.length + 1) };
  return { text, hint: null };
}
