import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolDefinition } from '../spec/chat.js';
import { isSamePrompt } from './same-prompt.js';

const tools: ToolDefinition[] = [{ name: 'calculator', description: 'Evaluates arithmetic', parameters: { type: 'object', properties: { expression: { type: 'string' } } } }];
const messages: ChatMessage[] = [
  { role: 'system', content: 'Be terse.' },
  { role: 'user', content: 'What is 2 + 3?' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'calculator', arguments: '{"expression":"2+3"}' }] },
  { role: 'tool', content: '5', toolCallId: 'call_1' },
];

describe('isSamePrompt', () => {
  it('holds for a request sent again, whatever its key order, undefined fields and record-only parts', () => {
    const resent = structuredClone(messages).map((message, index) => ({
      ...Object.fromEntries(Object.entries(message).reverse()),
      name: undefined,
      ...(index === 2 ? { reasoning: 'thinking', providerFields: [{ from: 'signature', value: 'x' }] } : {}),
    })) as ChatMessage[];
    const reorderedTools = [{ parameters: structuredClone(tools[0]!.parameters), description: 'Evaluates arithmetic', name: 'calculator' }] as ToolDefinition[];
    expect(isSamePrompt({ messages, tools }, { messages: resent, tools: reorderedTools })).toBe(true);
  });

  it('fails for a new turn, changed content, another tool call or other tools', () => {
    const base = { messages, tools };
    expect(isSamePrompt(base, { messages: [...messages, { role: 'user', content: 'thanks' }], tools })).toBe(false);
    expect(isSamePrompt(base, { messages: messages.map((message, index) => (index === 1 ? { ...message, content: 'What is 2 + 4?' } : message)), tools })).toBe(false);
    const otherCall = messages.map((message, index) => (index === 2 ? { ...message, toolCalls: [{ id: 'call_1', name: 'calculator', arguments: '{"expression":"2+4"}' }] } : message));
    expect(isSamePrompt(base, { messages: otherCall, tools })).toBe(false);
    expect(isSamePrompt(base, { messages, tools: [] })).toBe(false);
    expect(isSamePrompt(base, { messages, tools: [{ ...tools[0]!, description: 'Adds' }] })).toBe(false);
    expect(isSamePrompt(base, { messages: messages.map((message, index) => (index === 3 ? { ...message, toolCallId: 'call_2' } : message)), tools })).toBe(false);
  });
});
