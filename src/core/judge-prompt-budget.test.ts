import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../spec/chat.js';
import { estimateTokens, judgePromptBudgetFor, shareRoom, templateAllowanceTokens } from './judge-prompt-budget.js';
import { buildHintPrompt, buildJudgePrompt } from './judge-prompts.js';

const window32k = { tokens: 32_768, countTokens: estimateTokens };
const promptTokens = (messages: ChatMessage[]) => messages.reduce((sum, message) => sum + estimateTokens(message.content), 0) + templateAllowanceTokens;

/** A coding agent's turn: a long system prompt with tool descriptions, then tool calls and long tool outputs, about 40 kB. */
function agentTurn(nextStateChars: number): { context: ChatMessage[]; response: ChatMessage; nextState: ChatMessage[] } {
  const system = `SYSTEM-HEAD You are a coding agent. ${'Tool read_file(path): returns the file. '.repeat(150)}SYSTEM-TAIL`;
  const context: ChatMessage[] = [{ role: 'system', content: system }, { role: 'user', content: 'USER-TASK Fix the failing test in src/parser.ts.' }];
  for (let index = 0; index < 6; index += 1) {
    context.push({ role: 'assistant', content: '', toolCalls: [{ id: `c${index}`, name: 'read_file', arguments: `{"path":"src/file-${index}.ts"}` }] });
    context.push({ role: 'tool', toolCallId: `c${index}`, content: `OUTPUT-${index}-START\n${'export const value = compute(input, options);\n'.repeat(130)}OUTPUT-${index}-END` });
  }
  const response: ChatMessage = { role: 'assistant', content: 'REPLY-START I changed the parser to accept trailing commas. REPLY-END' };
  const nextState: ChatMessage[] = [{ role: 'tool', toolCallId: 'c9', content: `NEXT-START ${'x'.repeat(nextStateChars)} NEXT-END` }];
  return { context, response, nextState };
}

describe('estimateTokens', () => {
  it('counts about a token per 3 bytes of UTF-8', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abc')).toBe(1);
    expect(estimateTokens('abcd')).toBe(2);
    // Three bytes a character: one token each, as Chinese tokenizes.
    expect(estimateTokens('你好吗')).toBe(3);
  });
});

describe('shareRoom', () => {
  it('gives each part its share when every part needs more', () => {
    expect(shareRoom(1_000, { context: 5_000, response: 5_000, nextState: 5_000 })).toEqual({ context: 500, response: 250, nextState: 250 });
  });

  it('lets what a part leaves flow to the others in proportion to their shares', () => {
    expect(shareRoom(1_000, { context: 5_000, response: 10, nextState: 5_000 })).toEqual({ context: 660, response: 10, nextState: 330 });
    expect(shareRoom(1_000, { context: 100, response: 10, nextState: 5_000 })).toEqual({ context: 100, response: 10, nextState: 890 });
    expect(shareRoom(1_000, { context: 100, response: 10, nextState: 20 })).toEqual({ context: 100, response: 10, nextState: 20 });
  });
});

describe('judgePromptBudgetFor', () => {
  it('lets a 40 kB agent turn reach a 32k-token judge whole', () => {
    const turn = agentTurn(2_000);
    const contextChars = turn.context.reduce((sum, message) => sum + message.content.length, 0);
    expect(contextChars).toBeGreaterThan(40_000);
    const budget = judgePromptBudgetFor(turn, window32k, 512);
    const prompt = buildJudgePrompt(turn, budget)[1]?.content ?? '';
    for (const message of [...turn.context, turn.response, ...turn.nextState]) expect(prompt).toContain(message.content);
    expect(prompt).not.toContain('omitted');
  });

  it('keeps the latest context, the system head and both ends of the next state when the window is too small', () => {
    const turn = agentTurn(60_000);
    const budget = judgePromptBudgetFor(turn, { tokens: 8_192, countTokens: estimateTokens }, 512);
    const hintPrompt = buildHintPrompt(turn, budget);
    expect(promptTokens(hintPrompt)).toBeLessThanOrEqual(8_192 - 512);
    const text = hintPrompt[1]?.content ?? '';
    for (const kept of ['SYSTEM-HEAD', 'OUTPUT-5-START', 'OUTPUT-5-END', 'REPLY-START', 'REPLY-END', 'NEXT-START', 'NEXT-END']) expect(text).toContain(kept);
    expect(text).not.toContain('SYSTEM-TAIL');
    expect(text).toMatch(/\(\d+ earlier messages omitted\)/);
    // The reply needs little; the rest of its share went to the context and the next state.
    expect(budget.context + budget.nextState).toBeGreaterThan(0.75 * (budget.context + budget.response + budget.nextState));
    expect(budget.nextState).toBeGreaterThanOrEqual(Math.floor(budget.context / 2) - 1);
  });

  it('fits every prompt into the window by the given counter, whatever it is', () => {
    const words = (text: string) => text.split(/\s+/).filter((word) => word !== '').length * 2;
    const turn = agentTurn(30_000);
    for (const tokens of [2_048, 4_096, 16_384]) {
      const budget = judgePromptBudgetFor(turn, { tokens, countTokens: words }, 256);
      for (const prompt of [buildJudgePrompt(turn, budget), buildHintPrompt(turn, budget)]) {
        const counted = prompt.reduce((sum, message) => sum + words(message.content), 0) + templateAllowanceTokens;
        expect(counted).toBeLessThanOrEqual(tokens - 256);
      }
    }
  });
});
