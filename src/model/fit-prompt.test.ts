import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatRenderer } from '../spec/chat-renderer.js';
import type { ChatMessage, ToolDefinition } from '../spec/chat.js';
import { loadChatRenderer } from './create-chat-renderer.js';
import { fitPrompt } from './fit-prompt.js';

const builtinFolder = fileURLToPath(new URL('../../models/builtin-tiny', import.meta.url));
const rule = 'You are a personal assistant running inside OpenClaw. Use tools when they help and keep answers short. ';
// About the shape of OpenClaw's first request: a ~40 KB system prompt and a dozen tool schemas.
const agentSystem = Array.from({ length: 300 }, (_, index) => `## Section ${index}\n${rule}`).join('\n');
const tools: ToolDefinition[] = Array.from({ length: 12 }, (_, index) => ({
  name: `tool_${index}`,
  description: `Tool number ${index}: ${rule.repeat(4)}`,
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
}));

describe('fitPrompt', () => {
  let renderer: ChatRenderer;
  beforeAll(async () => {
    renderer = await loadChatRenderer(builtinFolder);
  });

  it('leaves a prompt that fits as it is', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'What is 7 + 5?' }];
    expect(fitPrompt(renderer, messages, [], { limit: 512 })).toEqual({ tokenIds: renderer.renderPrompt(messages, []), fit: null });
  });

  it("fits an agent's first request: tools dropped, the system prompt's head kept, the user's message whole", () => {
    const question = 'Tom has 3 apples and buys 4 more. How many now?';
    const messages: ChatMessage[] = [{ role: 'system', content: agentSystem }, { role: 'user', content: question }];
    expect(renderer.renderPrompt(messages, tools).length).toBeGreaterThan(8_000);
    const fitted = fitPrompt(renderer, messages, tools, { limit: 512 });
    expect(fitted.tokenIds.length).toBeLessThanOrEqual(512);
    expect(fitted.fit).toEqual({ droppedTools: 12, shortenedSystemMessages: 1, droppedMessages: 0, shortenedLastMessage: false });
    const text = renderer.decode(fitted.tokenIds);
    expect(text).toContain('## Section 0\n');
    expect(text).not.toContain('## Section 299');
    expect(text).toContain(question);
    expect(text).not.toContain('tool_0');
    // The ids are the template's own rendering of the fitted messages, not a cut of the whole prompt.
    expect(fitted.tokenIds.slice(-3)).toEqual(renderer.renderPrompt([{ role: 'user', content: question }], []).slice(-3));
  });

  it("cuts a system message after the user's (Claude Code's agent list) to its head too, so the question stays", () => {
    const question = 'Tom has 3 apples and buys 4 more. How many now?';
    const messages: ChatMessage[] = [{ role: 'system', content: agentSystem }, { role: 'user', content: question }, { role: 'system', content: agentSystem }];
    const fitted = fitPrompt(renderer, messages, tools, { limit: 512 });
    expect(fitted.tokenIds.length).toBeLessThanOrEqual(512);
    expect(fitted.fit).toEqual({ droppedTools: 12, shortenedSystemMessages: 2, droppedMessages: 0, shortenedLastMessage: false });
    expect(renderer.decode(fitted.tokenIds)).toContain(question);
  });

  it('keeps the newest messages, never starting on a tool result, and fits the same messages the same way', () => {
    const turns: ChatMessage[] = [{ role: 'system', content: agentSystem }];
    for (let index = 0; index < 30; index += 1) {
      turns.push({ role: 'user', content: `Question ${index}: ${rule}` });
      turns.push({ role: 'assistant', content: '', toolCalls: [{ id: `call_${index}`, name: 'tool_1', arguments: '{"path":"a"}' }] });
      turns.push({ role: 'tool', toolCallId: `call_${index}`, content: `Result ${index}: ${rule}` });
      turns.push({ role: 'assistant', content: `Answer ${index}.` });
    }
    turns.push({ role: 'user', content: 'And the last question?' });
    const fitted = fitPrompt(renderer, turns, tools, { limit: 512 });
    expect(fitted.tokenIds.length).toBeLessThanOrEqual(512);
    const fit = fitted.fit!;
    expect(fit.droppedMessages).toBeGreaterThan(0);
    expect(fit.droppedMessages).toBeLessThan(120);
    expect(turns[1 + fit.droppedMessages]?.role).not.toBe('tool');
    const text = renderer.decode(fitted.tokenIds);
    expect(text).toContain('And the last question?');
    expect(text).toContain('Answer 29.');
    expect(text).not.toContain('Question 0:');
    // Starting one message earlier (on a tool result's call, not the result) would not have fitted.
    let earlier = fit.droppedMessages - 1;
    while (turns[1 + earlier]?.role === 'tool') earlier -= 1;
    const shortenedSystem = { role: 'system' as const, content: renderer.decode(renderer.encode(agentSystem).slice(0, 128)) };
    expect(renderer.renderPrompt([shortenedSystem, ...turns.slice(1 + earlier)], []).length).toBeGreaterThan(512);
    expect(renderer.renderPrompt([shortenedSystem, ...turns.slice(1 + fit.droppedMessages)], [])).toEqual(fitted.tokenIds);
    expect(fitPrompt(renderer, turns, tools, { limit: 512 })).toEqual(fitted);
    const kept = turns.slice(1 + fit.droppedMessages);
    expect(kept.at(-1)?.content).toBe('And the last question?');
  });

  it('keeps the tail of a last message too long for the window', () => {
    const long = Array.from({ length: 400 }, (_, index) => `word${index}`).join(' ');
    const fitted = fitPrompt(renderer, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: long }], [], { limit: 256 });
    expect(fitted.tokenIds.length).toBeLessThanOrEqual(256);
    expect(fitted.fit?.shortenedLastMessage).toBe(true);
    const text = renderer.decode(fitted.tokenIds);
    expect(text).toContain('word399');
    expect(text).not.toContain('word0 ');
    expect(text).toContain('Be brief.');
  });
});
