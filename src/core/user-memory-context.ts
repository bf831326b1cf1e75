/**
 * A user's memory as context (`--user-memory context | teacher | both`): a block of the user's
 * entries at the end of the first system message. Pure.
 *
 * Where: after the agent's own system prompt, before the conversation. The system prompt ahead of
 * it stays a prefix every user's requests share (a prefix cache keeps it once), and the user's
 * conversation after it keeps its cached prefix from turn to turn until the memory changes; the
 * entries are listed oldest first, so a new one changes only the block's end.
 *
 * The block is marked, so it can be found again: the OPD teacher's context replaces a block the
 * served prompt already held with the memory as it is when the turn is judged.
 */
import type { ChatMessage } from '../spec/chat.js';
import { estimateTokens } from './judge-prompt-budget.js';

/**
 * What `--user-memory` does with each user's memory: `off` keeps none and adds none (clawrl as it
 * was); `context` adds it to the user's requests; `teacher` only to the OPD teacher's context (the
 * served prompt unchanged, so the student learns to act without it); `both` does both.
 */
export const userMemoryModes = ['off', 'context', 'teacher', 'both'] as const;
export type UserMemoryMode = (typeof userMemoryModes)[number];

/** Whether a mode adds the memory to served requests, and to the OPD teacher's context. */
export const servesMemory = (mode: UserMemoryMode): boolean => mode === 'context' || mode === 'both';
export const teachesMemory = (mode: UserMemoryMode): boolean => mode === 'teacher' || mode === 'both';

export const memoryMarker = '[what you remember of this user]';
const memorySeparator = `\n\n${memoryMarker}\n`;

/** The block's size by default (`--user-memory-tokens`), in estimated tokens (`estimateTokens`, which errs high). */
export const defaultMemoryTokens = 400;

/**
 * The block for `entries` (oldest first), within `maximumTokens`: when they do not all fit, the
 * newest that do are kept (still oldest first). Null for no entries, or none that fits.
 */
export function memoryBlockOf(entries: readonly { text: string }[], maximumTokens: number): string | null {
  const kept: string[] = [];
  let tokens = estimateTokens(memoryMarker);
  for (let index = entries.length - 1; index >= 0; index -= 1) {
    const line = `- ${(entries[index] as { text: string }).text}`;
    const cost = estimateTokens(line) + 1;
    if (tokens + cost > maximumTokens) break;
    tokens += cost;
    kept.unshift(line);
  }
  return kept.length === 0 ? null : kept.join('\n');
}

/** `content` without a memory block at its end. */
function withoutBlock(content: string): string {
  const at = content.lastIndexOf(memorySeparator);
  if (at >= 0) return content.slice(0, at);
  return content.startsWith(`${memoryMarker}\n`) ? '' : content;
}

/**
 * The messages with `block` as the memory at the end of the first system message (a system
 * message first is added when there is none), replacing a block already there; with a null block,
 * only the old block goes. The input is never mutated.
 */
export function withUserMemory(messages: readonly ChatMessage[], block: string | null): ChatMessage[] {
  const copy = messages.map((message) => ({ ...message }));
  const first = copy[0];
  if (first?.role === 'system') {
    const base = withoutBlock(first.content);
    // A system message that held only a block was added for it: it goes with the block.
    if (block === null && base === '' && first.content !== '') return copy.slice(1);
    copy[0] = { ...first, content: block === null ? base : base === '' ? `${memoryMarker}\n${block}` : base + memorySeparator + block };
    return copy;
  }
  return block === null ? copy : [{ role: 'system', content: `${memoryMarker}\n${block}` }, ...copy];
}
