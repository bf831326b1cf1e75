/**
 * Wire types of the Anthropic Messages API (`POST /v1/messages`, `/v1/messages/count_tokens`) as
 * clawrl accepts and returns them, their conversion to domain types, and Anthropic's error shape.
 * What clawrl interprets is checked strictly; the optional fields clients send (`metadata`,
 * `cache_control`, `service_tier`, ...) are tolerated.
 */
import { z } from 'zod';
import type { ChatMessage, SamplingOptions, ToolCall, ToolChoice, ToolDefinition } from '../../../spec/chat.js';
import type { ClawrlError } from '../../../spec/clawrl-error.js';
import type { ChoiceResult, FinishReason } from '../../../spec/inference-engine.js';
import type { SamplingDefaults } from '../../gateway-context.js';
import { domainSampling, UnsupportedContentError } from '../domain-request.js';
import { keepUnreadFields } from '../provider-fields.js';

/** The fields of each block this adapter reads; the rest is kept as the message's provider fields. */
const readBlockFields: Record<string, readonly string[]> = {
  text: ['type', 'text'],
  tool_use: ['type', 'id', 'name', 'input'],
  tool_result: ['type', 'tool_use_id', 'content', 'is_error'],
  thinking: ['type', 'thinking'],
  redacted_thinking: ['type'],
};

function keepUnreadBlockFields(message: ChatMessage, blocks: ReadonlyArray<{ type: string }>, only?: (block: { type: string }) => boolean, where = 'content'): void {
  blocks.forEach((block, index) => {
    if (only === undefined || only(block)) keepUnreadFields(message, `${where}[${index}]`, block, readBlockFields[block.type] ?? ['type']);
  });
}

const textBlock = z.object({ type: z.literal('text'), text: z.string() }).loose();
/** Blocks a text-only model cannot take; refused by name rather than silently dropped. */
const mediaBlock = z.object({ type: z.enum(['image', 'document', 'search_result']) }).loose();
const toolUseBlock = z
  .object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()) })
  .loose();
const toolResultBlock = z
  .object({
    type: z.literal('tool_result'),
    tool_use_id: z.string().min(1),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, mediaBlock]))]).optional(),
    is_error: z.boolean().optional(),
  })
  .loose();
const thinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string() }).loose();
const redactedThinkingBlock = z.object({ type: z.literal('redacted_thinking') }).loose();
const block = z.discriminatedUnion('type', [textBlock, mediaBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock]);

// `system` inside messages: Claude Code's mid-conversation system messages (beta `mid-conversation-system-2026-04-07`).
const message = z.object({ role: z.enum(['user', 'assistant', 'system']), content: z.union([z.string(), z.array(block)]) }).loose();

const toolName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'tool names are 1-64 letters, digits, _ or -');
const customTool = z
  .object({
    type: z.literal('custom').optional(),
    name: toolName,
    description: z.string().optional(),
    input_schema: z.record(z.string(), z.unknown()),
  })
  .loose();

const toolChoice = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto') }).loose(),
  z.object({ type: z.literal('any') }).loose(),
  z.object({ type: z.literal('none') }).loose(),
  z.object({ type: z.literal('tool'), name: toolName }).loose(),
]);

const countTokensFields = {
  model: z.string().min(1),
  messages: z.array(message).min(1, 'messages must not be empty'),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  // Server tools (`web_search_20250305`, ...) carry a `type` and no `input_schema`; they are refused by name.
  tools: z.array(z.object({ type: z.string().optional(), name: z.string() }).loose()).optional(),
  tool_choice: toolChoice.optional(),
  thinking: z.object({ type: z.enum(['enabled', 'disabled', 'adaptive']) }).loose().optional(),
};

export const countTokensRequestSchema = z.object(countTokensFields).loose();

export const messagesRequestSchema = z
  .object({
    ...countTokensFields,
    max_tokens: z.number().int().positive(),
    stop_sequences: z.array(z.string()).max(16).optional(),
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    top_k: z.number().int().min(0).optional(),
    stream: z.boolean().optional(),
  })
  .loose();

export type CountTokensRequest = z.infer<typeof countTokensRequestSchema>;
export type MessagesRequest = z.infer<typeof messagesRequestSchema>;

function textOf(blocks: ReadonlyArray<{ type: string; text?: unknown }>, path: string): string {
  return blocks
    .map((part, index) => {
      if (part.type === 'text' && typeof part.text === 'string') return part.text;
      throw new UnsupportedContentError(`${path}[${index}]: content block type '${part.type}' is not supported: the model takes text only`);
    })
    .join('');
}

/** Kept apart from the reply's text: a thinking block is the record's, not the reply's identity. */
function thinkingOf(blocks: ReadonlyArray<z.infer<typeof block>>): string {
  return blocks
    .map((part) => (part.type === 'thinking' ? part.thinking : part.type === 'redacted_thinking' ? '[redacted thinking]' : ''))
    .filter((text) => text !== '')
    .join('\n');
}

/**
 * The conversation as domain messages: `system` first (its blocks joined by a blank line); a user
 * message's `tool_result` blocks become tool messages, followed by its text; an assistant
 * message's `tool_use` blocks become its tool calls (their input as JSON text) and its thinking
 * blocks its reasoning.
 */
export function toDomainMessages(request: CountTokensRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const system = request.system;
  if (system !== undefined) {
    const text = typeof system === 'string' ? system : system.map((part) => part.text).join('\n\n');
    if (text !== '') {
      const message: ChatMessage = { role: 'system', content: text };
      if (typeof system !== 'string') keepUnreadBlockFields(message, system, undefined, 'system');
      messages.push(message);
    }
  }
  request.messages.forEach((wire, index) => {
    const path = `messages[${index}].content`;
    const before = messages.length;
    toDomainMessagesOf(wire, path, messages);
    const last = messages.at(-1);
    if (last !== undefined && messages.length > before) keepUnreadFields(last, 'message', wire, ['role', 'content']);
  });
  return messages;
}

/** One wire message as one or more domain messages (a user message's tool results come first). */
function toDomainMessagesOf(wire: CountTokensRequest['messages'][number], path: string, messages: ChatMessage[]): void {
  if (typeof wire.content === 'string') {
    messages.push({ role: wire.role, content: wire.content });
    return;
  }
  if (wire.role === 'system') {
    const message: ChatMessage = { role: 'system', content: textOf(wire.content, path) };
    keepUnreadBlockFields(message, wire.content);
    messages.push(message);
    return;
  }
  if (wire.role === 'assistant') {
    const calls: ToolCall[] = [];
    const texts: Array<{ type: string; text?: unknown }> = [];
    for (const part of wire.content) {
      if (part.type === 'tool_use') calls.push({ id: part.id, name: part.name, arguments: JSON.stringify(part.input) });
      else if (part.type !== 'thinking' && part.type !== 'redacted_thinking') texts.push(part);
    }
    const reasoning = thinkingOf(wire.content);
    const message: ChatMessage = {
      role: 'assistant',
      content: textOf(texts, path),
      ...(calls.length > 0 ? { toolCalls: calls } : {}),
      ...(reasoning === '' ? {} : { reasoning }),
    };
    keepUnreadBlockFields(message, wire.content);
    messages.push(message);
    return;
  }
  const texts: Array<{ type: string; text?: unknown }> = [];
  wire.content.forEach((part, partIndex) => {
    if (part.type !== 'tool_result') {
      texts.push(part);
      return;
    }
    const content = part.content === undefined ? '' : typeof part.content === 'string' ? part.content : textOf(part.content, `${path}[${partIndex}].content`);
    const result: ChatMessage = { role: 'tool', content: part.is_error === true ? `Error: ${content}` : content, toolCallId: part.tool_use_id };
    keepUnreadFields(result, `content[${partIndex}]`, part, readBlockFields.tool_result ?? []);
    messages.push(result);
  });
  if (texts.length > 0 || wire.content.length === 0) {
    const message: ChatMessage = { role: 'user', content: textOf(texts, path) };
    keepUnreadBlockFields(message, wire.content, (block) => block.type !== 'tool_result');
    messages.push(message);
  }
}

export function toDomainTools(request: CountTokensRequest): ToolDefinition[] {
  // Server tools (`web_search_20250305`, `code_execution_...`: a type, no input_schema) run on
  // Anthropic's servers: they are not offered to the model, rather than refusing the client.
  const custom = (request.tools ?? []).map((wire, index) => ({ wire, index })).filter(({ wire }) => wire.type === undefined || wire.type === 'custom');
  return custom.map(({ wire, index }) => {
    const parsed = customTool.safeParse(wire);
    if (!parsed.success) throw new UnsupportedContentError(`tools[${index}]: ${parsed.error.issues[0]?.message ?? 'invalid tool'}`);
    return {
      name: parsed.data.name,
      ...(parsed.data.description === undefined ? {} : { description: parsed.data.description }),
      parameters: parsed.data.input_schema,
    };
  });
}

export function toDomainToolChoice(request: CountTokensRequest): ToolChoice {
  const choice = request.tool_choice;
  if (choice === undefined) return 'auto';
  if (choice.type === 'tool') return { name: choice.name };
  return choice.type === 'any' ? 'required' : choice.type;
}

export function toDomainSampling(request: MessagesRequest, defaults: SamplingDefaults): SamplingOptions {
  return domainSampling(
    { maxTokens: request.max_tokens, temperature: request.temperature, topP: request.top_p, topK: request.top_k, stop: request.stop_sequences },
    defaults,
  );
}

/** Anthropic has no reason for aborted or failed generations; clients see what they got as a turn end. */
export function wireStopReason(reason: FinishReason): 'end_turn' | 'max_tokens' | 'tool_use' {
  if (reason === 'length') return 'max_tokens';
  return reason === 'tool_calls' ? 'tool_use' : 'end_turn';
}

/**
 * A tool call's arguments as the `input` object Anthropic clients expect. Arguments the model
 * wrote that are not a JSON object cannot be an `input`; they are sent as `{}` (the record keeps
 * the model's text).
 */
export function wireToolInput(call: ToolCall): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(call.arguments);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function wireContent(choice: ChoiceResult): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = [];
  if (choice.message.content !== '' || choice.toolCalls.length === 0) blocks.push({ type: 'text', text: choice.message.content });
  for (const call of choice.toolCalls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: wireToolInput(call) });
  return blocks;
}

export function wireMessage(
  identity: { id: string; model: string },
  state: { content: Array<Record<string, unknown>>; stopReason: ReturnType<typeof wireStopReason> | null; inputTokens: number; outputTokens: number },
): Record<string, unknown> {
  return {
    id: identity.id,
    type: 'message',
    role: 'assistant',
    model: identity.model,
    content: state.content,
    stop_reason: state.stopReason,
    stop_sequence: null,
    usage: { input_tokens: state.inputTokens, output_tokens: state.outputTokens },
  };
}

/** Anthropic's error type for each status clawrl answers with. */
function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    default:
      return 'api_error';
  }
}

export function anthropicErrorOf(error: ClawrlError): { type: 'error'; error: { type: string; message: string } } {
  return { type: 'error', error: { type: anthropicErrorType(error.status), message: error.message } };
}
