import { describe, expect, it } from 'vitest';
import type { ChatMessage, SamplingOptions, ToolDefinition } from '../../spec/chat.js';
import { tokenIdsSchema, toWireChatRequest, wireChatRequestParts, type ChatFlavor } from './chat-completions-api.js';
import { createJsonStringMemo } from './json-string-memo.js';

const systemPrompt = `You are "helpful".\n${'Follow the rules.\n'.repeat(2000)}`;

const messages: ChatMessage[] = [
  { role: 'system', content: systemPrompt },
  { role: 'user', content: 'list the files', name: 'ana' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'ls', arguments: '{"path":"."}' }] },
  { role: 'tool', content: 'a.txt\nb.txt', toolCallId: 'call_1' },
  { role: 'assistant', content: 'Two files: a.txt and b.txt \u2028 é \ud800' },
];

const tools: ToolDefinition[] = [
  { name: 'ls', description: 'Lists files', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'noop' },
];

const sampling: SamplingOptions = { n: 2, temperature: 0.7, topP: 0.9, topK: 20, seed: 7, stop: ['</s>'], maxTokens: 64, topLogprobs: 3 };
const plainSampling: SamplingOptions = { n: 1, temperature: 1, topP: 1, stop: [], topLogprobs: 0 };

describe('wireChatRequestParts', () => {
  it('are, one after another, the UTF-8 of JSON.stringify of the wire request, byte for byte, for every flavor and shape', () => {
    const memo = createJsonStringMemo();
    const flavors: ChatFlavor[] = ['vllm', 'sglang', 'openai'];
    for (const flavor of flavors) {
      for (const input of [
        { model: 'm', messages, tools, toolChoice: 'auto' as const, sampling },
        { model: 'adapter-3', messages: messages.slice(0, 2), tools: [], toolChoice: { name: 'ls' }, sampling: plainSampling },
        { model: 'm', messages: [{ role: 'user' as const, content: '' }], tools, toolChoice: 'none' as const, sampling: plainSampling },
        { model: 'm', messages, tools: [], toolChoice: 'auto' as const, sampling, responseFormat: { type: 'json_schema' as const, name: 'answer', schema: { type: 'object' }, strict: true } },
      ]) {
        const wire = toWireChatRequest(input, flavor);
        // Twice: the second time the system prompt's JSON comes from the memo.
        const bytes = () => Buffer.concat(wireChatRequestParts(wire, memo).map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
        expect(bytes()).toEqual(Buffer.from(JSON.stringify(wire)));
        expect(bytes()).toEqual(Buffer.from(JSON.stringify(wire)));
      }
    }
    expect(memo.size.entries).toBe(1);
  });

  it('passes response_format on in the wire shape', () => {
    const input = { model: 'm', messages, tools: [], toolChoice: 'auto' as const, sampling: plainSampling };
    expect(toWireChatRequest({ ...input, responseFormat: { type: 'json_object' } }, 'vllm').response_format).toEqual({ type: 'json_object' });
    expect(toWireChatRequest({ ...input, responseFormat: { type: 'json_schema', name: 'a', schema: { type: 'object' } } }, 'openai').response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'a', schema: { type: 'object' } },
    });
    expect(toWireChatRequest(input, 'vllm')).not.toHaveProperty('response_format');
  });
});

describe('tokenIdsSchema', () => {
  it('accepts integer arrays and rejects anything else', () => {
    expect(tokenIdsSchema.safeParse([]).success).toBe(true);
    expect(tokenIdsSchema.safeParse([1, 2, 0, -1, 151_643]).success).toBe(true);
    for (const bad of [[1, 2.5], [1, '2'], [null], 'oops', { length: 1, 0: 1 }, null]) {
      expect(tokenIdsSchema.safeParse(bad).success).toBe(false);
    }
  });
});
