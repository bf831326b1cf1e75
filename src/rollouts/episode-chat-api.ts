/**
 * Domain chat messages to and from the OpenAI wire shapes the official client sends, for the
 * episode runner: the one place rollouts meet snake_case (`tool_calls`, `tool_call_id`).
 */
import type OpenAI from 'openai';
import type { ChatMessage, ToolDefinition } from '../spec/chat.js';

type WireMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type WireTool = OpenAI.Chat.Completions.ChatCompletionTool;

export function toWireMessage(message: ChatMessage): WireMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.toolCallId ?? '' };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      return {
        role: 'assistant',
        content: message.content,
        ...(calls.length === 0
          ? {}
          : { tool_calls: calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) }),
      };
    }
  }
}

export function toWireTool(tool: ToolDefinition): WireTool {
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      ...(tool.parameters === undefined ? {} : { parameters: tool.parameters }),
    },
  };
}

export function fromWireAssistant(message: OpenAI.Chat.Completions.ChatCompletionMessage): ChatMessage {
  const calls = (message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }] : []));
  return { role: 'assistant', content: message.content ?? '', ...(calls.length === 0 ? {} : { toolCalls: calls }) };
}
