/**
 * The judge prompt's budget shared out of the judge model's context window, in tokens. A real
 * agent turn is a prompt of tens of kilobytes with long tool outputs, so a judge of a real model
 * should see as much of it as its window holds.
 *
 * What is left of the window after the judge's answer (`outputTokens`), the fixed instructions and
 * fences, and a small allowance for the chat template is shared: the request context 50%, the reply
 * 25%, the next state 25%. A part that needs less than its share keeps only what it needs and the
 * rest flows to the parts that need more, in proportion to their shares. Within the context, the
 * head of a leading system prompt gets up to a quarter of the context's budget, or more when the
 * other messages leave it room. The context weighs most because it holds what the reply answered
 * (the user's request, the tool results the reply acted on); the next state decides the verdict,
 * but what decides it (a thanks, a correction, an error line) is rarely long.
 *
 * Pure: the token counter is given (the judge model's tokenizer, or `estimateTokens`).
 */
import type { ChatMessage } from '../spec/chat.js';
import { buildHintPrompt, buildJudgePrompt, messageText, minimumMessageLength, type JudgePromptBudget, type JudgePromptInput } from './judge-prompts.js';

export interface JudgeContextWindow {
  /** The judge model's context window: prompt and answer together, in tokens. */
  tokens: number;
  /** Tokens of a text as the judge model counts them. */
  countTokens: (text: string) => number;
}

export type JudgePromptPart = 'context' | 'response' | 'nextState';

/** Each part's share of the room the window leaves. */
export const judgePromptShares: { readonly [P in JudgePromptPart]: number } = { context: 0.5, response: 0.25, nextState: 0.25 };

/** The most of the context's budget a system prompt's head takes when the other messages need the rest. */
export const systemHeadShare = 0.25;

/** Tokens held back for the judge model's chat template (role markers) and for counting differences. */
export const templateAllowanceTokens = 64;

/** The window assumed when the judge model does not report one. */
export const defaultJudgeContextTokens = 32_768;

/**
 * A token count for a judge whose tokenizer clawrl does not have: the text's UTF-8 bytes divided
 * by 3, rounded up. Tokenizers of current models take about 4 bytes per token of English prose, 3 of
 * code or JSON and 2–3 of Chinese or Japanese (1 character, 3 bytes, is 1–1.5 tokens), so the estimate
 * errs towards too many tokens: it wastes some of the window rather than overflow it.
 */
export function estimateTokens(text: string): number {
  let bytes = 0;
  for (const character of text) {
    const code = character.codePointAt(0) as number;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return Math.ceil(bytes / 3);
}

/**
 * Shares `room` among parts that need `needs`, in proportion to `shares`: a part that needs less
 * than its share gets what it needs, and what it leaves is shared again among the others.
 */
export function shareRoom(room: number, needs: { readonly [P in JudgePromptPart]: number }, shares = judgePromptShares): Record<JudgePromptPart, number> {
  const result: Record<JudgePromptPart, number> = { context: 0, response: 0, nextState: 0 };
  let open: JudgePromptPart[] = ['context', 'response', 'nextState'];
  let left = Math.max(0, room);
  for (;;) {
    const shareSum = open.reduce((sum, part) => sum + shares[part], 0);
    const satisfied = open.filter((part) => needs[part] <= (left * shares[part]) / shareSum);
    if (satisfied.length === 0 || satisfied.length === open.length) {
      for (const part of open) result[part] = satisfied.length === open.length ? needs[part] : Math.floor((left * shares[part]) / shareSum);
      return result;
    }
    for (const part of satisfied) {
      result[part] = needs[part];
      left -= needs[part];
    }
    open = open.filter((part) => !satisfied.includes(part));
  }
}

const emptied = (message: ChatMessage): ChatMessage => ({ role: message.role, content: '' });

function promptTokens(messages: readonly ChatMessage[], countTokens: (text: string) => number): number {
  return messages.reduce((sum, message) => sum + countTokens(message.content), 0) + templateAllowanceTokens;
}

interface PartNeeds {
  system: number;
  otherContext: number;
  response: number;
  nextState: number;
}

function needsOf(input: JudgePromptInput, countTokens: (text: string) => number): PartNeeds {
  const need = (messages: readonly ChatMessage[]) => messages.reduce((sum, message) => sum + countTokens(messageText(message)), 0);
  const hasSystem = input.context[0]?.role === 'system';
  return {
    system: hasSystem ? need(input.context.slice(0, 1)) : 0,
    otherContext: need(hasSystem ? input.context.slice(1) : input.context),
    response: need([input.response]),
    nextState: need(input.nextState),
  };
}

/** The budget for `room` tokens of fenced text. */
function budgetOf(needs: PartNeeds, room: number, countTokens: (text: string) => number): JudgePromptBudget {
  const contextNeed = needs.system + needs.otherContext;
  const shared = shareRoom(room, { context: contextNeed, response: needs.response, nextState: needs.nextState });
  const systemHead = Math.min(needs.system, Math.max(Math.floor(shared.context * systemHeadShare), shared.context - needs.otherContext));
  // A context that fits whole gets a margin of `minimumMessageLength`, which rendering never uses:
  // without it the oldest short messages would meet the rule that leaves a message out once fewer
  // than that many units are left.
  const context = shared.context >= contextNeed ? contextNeed + minimumMessageLength : shared.context;
  return { ...shared, context, systemHead, measure: countTokens };
}

/**
 * The token budget of a turn's judge prompts in a window. The verdict and the hint prompt share it
 * (the hint prompt's instructions are the longer, so they are what is counted). The result is
 * checked by counting the rendered hint prompt; when rounding or the tokenizer's merges across cuts
 * take it over, the room shrinks by the excess and the budget is shared again.
 */
export function judgePromptBudgetFor(input: JudgePromptInput, window: JudgeContextWindow, outputTokens: number): JudgePromptBudget {
  // Every render counts every message again; one turn's texts are counted once.
  const counted = new Map<string, number>();
  const countTokens = (text: string): number => {
    let tokens = counted.get(text);
    if (tokens === undefined) {
      tokens = window.countTokens(text);
      counted.set(text, tokens);
    }
    return tokens;
  };
  const limit = window.tokens - outputTokens;
  // The instructions and fences alone: every message present and empty.
  const unlimited = { context: Infinity, systemHead: Infinity, response: Infinity, nextState: Infinity };
  const empty = { context: input.context.map(emptied), response: emptied(input.response), nextState: input.nextState.map(emptied) };
  const skeleton = Math.max(...[buildJudgePrompt, buildHintPrompt].map((build) => promptTokens(build(empty, unlimited), countTokens)));
  const needs = needsOf(input, countTokens);
  let room = limit - skeleton;
  let budget = budgetOf(needs, room, countTokens);
  for (let attempt = 0; attempt < 4; attempt += 1) {
    const excess = promptTokens(buildHintPrompt(input, budget), countTokens) - limit;
    if (excess <= 0) break;
    room -= excess;
    budget = budgetOf(needs, room, countTokens);
  }
  return budget;
}
