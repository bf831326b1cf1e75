/**
 * Fits a conversation into a model's window when it is longer, for models whose window is far
 * smaller than an agent's prompt (the built-in model's 1,024 positions against OpenClaw's ~11k
 * tokens of system prompt and tools). The rules, in order, each applied only while the prompt is
 * still too long:
 *
 * 1. The tool definitions go: their schemas are most of an agent's prompt, and a model this small
 *    calls no tools.
 * 2. Each system message keeps its head, at most `systemShare` of the limit in tokens in all: an
 *    agent's identity and rules come first, its long appendices (skills, workspace files) last.
 *    This holds for a system message anywhere: Claude Code sends one after the user's message (its
 *    agent list), and kept whole as the last message it would push the question out of the window.
 * 3. The newest messages are kept, as many as fit, never starting on a tool result (its call
 *    would be gone); the last message is always kept.
 * 4. If the last message alone is still too long, it keeps its tail (the newest text).
 *
 * Only prompts over the limit are fitted; one within it is rendered whole, as without fitting.
 * The result is rendered by the model's own template, so the ids are exactly what the model sees
 * and what the turn records: the turn stays trainable. The same messages always fit the same way,
 * so the OPD teacher's prompt (the same messages, the hint appended to the last one) is fitted
 * alike. A prompt that cannot be fitted (the template alone is too long) is left as it is, for the
 * caller's context-length error.
 */
import type { ChatRenderer } from '../spec/chat-renderer.js';
import type { ChatMessage, ToolDefinition } from '../spec/chat.js';

export interface PromptFit {
  droppedTools: number;
  /** System messages cut to their head. */
  shortenedSystemMessages: number;
  droppedMessages: number;
  /** Whether the last message was cut to its tail. */
  shortenedLastMessage: boolean;
}

export interface FittedPrompt {
  tokenIds: number[];
  /** Null when the prompt fitted as it was. */
  fit: PromptFit | null;
}

/**
 * The prompt a model with a small window sees: the whole prompt when it leaves the reply at least
 * `replyRoom` tokens (nothing changes for prompts that fit), else the prompt fitted to half the
 * window. Half, whatever the request's max_tokens, so that scoring (the OPD teacher's prompt is the
 * turn's messages with the hint) fits a turn's messages as its generation did.
 */
/** Generation fits a prompt that would leave the reply less than a quarter of the window; scoring fits by the same rule. */
export function fittedReplyRoom(contextLength: number): number {
  return Math.floor(contextLength / 4);
}

export function promptWithinWindow(renderer: ChatRenderer, messages: ChatMessage[], tools: ToolDefinition[], contextLength: number, replyRoom: number): number[] {
  return fitWithinWindow(renderer, messages, tools, contextLength, replyRoom).tokenIds;
}

/** `promptWithinWindow` with the whole prompt's size, for saying that a prompt was fitted and from how much. */
export function fitWithinWindow(renderer: ChatRenderer, messages: ChatMessage[], tools: ToolDefinition[], contextLength: number, replyRoom: number): { tokenIds: number[]; wholeTokens: number } {
  const whole = renderer.renderPrompt(messages, tools);
  if (whole.length + replyRoom <= contextLength) return { tokenIds: whole, wholeTokens: whole.length };
  return { tokenIds: fitPrompt(renderer, messages, tools, { limit: contextLength - Math.floor(contextLength / 2), whole }).tokenIds, wholeTokens: whole.length };
}

export interface FitPromptOptions {
  /** Largest prompt, in tokens. */
  limit: number;
  /** The share of `limit` that system messages may keep; default 0.25. */
  systemShare?: number;
  /** The whole prompt's ids, when the caller has rendered them already. */
  whole?: number[];
}

function headOf(renderer: ChatRenderer, text: string, tokens: number): string {
  const ids = renderer.encode(text);
  return ids.length <= tokens ? text : renderer.decode(ids.slice(0, Math.max(0, tokens)));
}

function tailOf(renderer: ChatRenderer, text: string, tokens: number): string {
  const ids = renderer.encode(text);
  return ids.length <= tokens ? text : renderer.decode(ids.slice(ids.length - Math.max(0, tokens)));
}

export function fitPrompt(renderer: ChatRenderer, messages: ChatMessage[], tools: ToolDefinition[], options: FitPromptOptions): FittedPrompt {
  const { limit } = options;
  const whole = options.whole ?? renderer.renderPrompt(messages, tools);
  if (whole.length <= limit) return { tokenIds: whole, fit: null };

  const fit: PromptFit = { droppedTools: tools.length, shortenedSystemMessages: 0, droppedMessages: 0, shortenedLastMessage: false };
  const withoutTools = tools.length > 0 ? renderer.renderPrompt(messages, []) : whole;
  if (withoutTools.length <= limit) return { tokenIds: withoutTools, fit };

  const systemTokens = Math.floor(limit * (options.systemShare ?? 0.25));
  const systemMessages = messages.filter((message) => message.role === 'system').length;
  const headed = messages.map((message) => {
    if (message.role !== 'system') return message;
    const content = headOf(renderer, message.content, Math.floor(systemTokens / systemMessages));
    if (content !== message.content) fit.shortenedSystemMessages += 1;
    return { ...message, content };
  });
  const leading = headed.findIndex((message) => message.role !== 'system');
  const systemCount = leading === -1 ? headed.length : leading;
  const system = headed.slice(0, systemCount);
  const conversation = headed.slice(systemCount);
  const render = (kept: ChatMessage[]) => renderer.renderPrompt([...system, ...kept], []);
  if (conversation.length === 0) return { tokenIds: render([]), fit };

  // The oldest start that still fits; starts on a tool result are skipped.
  let best: number | null = null;
  for (let start = conversation.length - 1; start >= 0; start -= 1) {
    if (start < conversation.length - 1 && conversation[start]?.role === 'tool') continue;
    if (render(conversation.slice(start)).length > limit) break;
    best = start;
  }
  if (best !== null) {
    fit.droppedMessages = best;
    return { tokenIds: render(conversation.slice(best)), fit };
  }

  const last = conversation.at(-1) as ChatMessage;
  fit.droppedMessages = conversation.length - 1;
  fit.shortenedLastMessage = true;
  // Re-encoding a cut text can merge tokens differently at the cut, so the room is re-checked.
  for (let room = limit - render([{ ...last, content: '' }]).length; room > 0; room -= 8) {
    const tokenIds = render([{ ...last, content: tailOf(renderer, last.content, room) }]);
    if (tokenIds.length <= limit) return { tokenIds, fit };
  }
  return { tokenIds: whole, fit: null };
}
