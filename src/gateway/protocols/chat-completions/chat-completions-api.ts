/**
 * Wire types of the OpenAI chat-completions API as clawrl accepts and returns them, and their
 * conversion to domain types. Request schemas are strict about what clawrl interprets and
 * tolerant of fields it does not use (clients send many optional fields), so an agent written for
 * OpenAI works unchanged.
 */
import { z } from 'zod';
import { keepUnreadFields } from '../provider-fields.js';
import type { ChatMessage, ResponseFormat, SamplingOptions, ToolChoice, ToolDefinition } from '../../../spec/chat.js';
import type { SamplingDefaults } from '../../gateway-context.js';
import { domainSampling, UnsupportedContentError } from '../domain-request.js';

const textPart = z.object({ type: z.literal('text'), text: z.string() }).loose();

/** Content as a string or an array of text parts; images and audio are not supported by clawrl's models. */
const content = z.union([
  z.string(),
  z.array(
    z.discriminatedUnion('type', [
      textPart,
      z.object({ type: z.literal('image_url') }).loose(),
      z.object({ type: z.literal('input_audio') }).loose(),
      z.object({ type: z.literal('file') }).loose(),
    ]),
  ),
]);

const toolCall = z.object({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content, name: z.string().optional() }).loose(),
  z.object({ role: z.literal('developer'), content, name: z.string().optional() }).loose(),
  z.object({ role: z.literal('user'), content, name: z.string().optional() }).loose(),
  z
    .object({
      role: z.literal('assistant'),
      content: content.nullish(),
      tool_calls: z.array(toolCall).nullish(),
      name: z.string().optional(),
    })
    .loose(),
  z.object({ role: z.literal('tool'), content, tool_call_id: z.string().min(1) }).loose(),
]);

const toolName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'tool names are 1-64 letters, digits, _ or -');

const tool = z.object({
  type: z.literal('function'),
  function: z
    .object({
      name: toolName,
      description: z.string().optional(),
      parameters: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullish(),
    })
    .loose(),
});

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: toolName }) }),
]);

const positiveInteger = z.number().int().positive();

export const chatCompletionRequestSchema = z
  .object({
    model: z.string().min(1),
    messages: z.array(message).min(1, 'messages must not be empty'),
    tools: z.array(tool).nullish(),
    tool_choice: toolChoice.nullish(),
    response_format: z
      .discriminatedUnion('type', [
        z.object({ type: z.literal('text') }).loose(),
        z.object({ type: z.literal('json_object') }).loose(),
        z.object({
          type: z.literal('json_schema'),
          json_schema: z.object({ name: z.string().min(1), schema: z.record(z.string(), z.unknown()).optional(), strict: z.boolean().nullish() }).loose(),
        }).loose(),
      ])
      .nullish(),
    n: z.number().int().min(1).max(16).nullish(),
    max_tokens: positiveInteger.nullish(),
    max_completion_tokens: positiveInteger.nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    top_k: z.number().int().min(-1).nullish(),
    seed: z.number().int().nullish(),
    stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().nullish() }).loose().nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().min(0).max(20).nullish(),
    // OpenClaw-RL compatible body fallbacks for the session headers.
    session_id: z.string().min(1).max(256).nullish(),
    turn_type: z.string().nullish(),
    session_done: z.union([z.boolean(), z.string(), z.number()]).nullish(),
  })
  .loose()
  .superRefine((request, context) => {
    if ((request.top_logprobs ?? 0) > 0 && request.logprobs !== true) {
      context.addIssue({ code: 'custom', path: ['top_logprobs'], message: 'top_logprobs requires logprobs: true' });
    }
  });

export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;
type WireContent = z.infer<typeof content>;

function contentText(value: WireContent | null | undefined, path: string): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  return value
    .map((part) => {
      if (part.type !== 'text') {
        throw new UnsupportedContentError(`${path}: content part type '${part.type}' is not supported; send text parts`);
      }
      return part.text;
    })
    .join('');
}

export function toDomainMessages(request: ChatCompletionRequest): ChatMessage[] {
  return request.messages.map((wire, index): ChatMessage => {
    const message = toDomainMessage(wire, `messages[${index}]`);
    keepUnreadFields(message, 'message', wire, ['role', 'content', 'tool_calls', 'tool_call_id', 'name']);
    if (Array.isArray(wire.content)) wire.content.forEach((part, partIndex) => keepUnreadFields(message, `content[${partIndex}]`, part, ['type', 'text']));
    return message;
  });
}

function toDomainMessage(wire: ChatCompletionRequest['messages'][number], path: string): ChatMessage {
  switch (wire.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: contentText(wire.content, path) };
    case 'user':
      return { role: 'user', content: contentText(wire.content, path), ...(wire.name ? { name: wire.name } : {}) };
    case 'assistant': {
      const calls = (wire.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      }));
      return { role: 'assistant', content: contentText(wire.content, path), ...(calls.length > 0 ? { toolCalls: calls } : {}) };
    }
    case 'tool':
      return { role: 'tool', content: contentText(wire.content, path), toolCallId: wire.tool_call_id };
  }
}

export function toDomainTools(request: ChatCompletionRequest): ToolDefinition[] {
  return (request.tools ?? []).map((wire) => ({
    name: wire.function.name,
    ...(wire.function.description === undefined ? {} : { description: wire.function.description }),
    ...(wire.function.parameters === undefined ? {} : { parameters: wire.function.parameters }),
  }));
}

export function toDomainResponseFormat(request: ChatCompletionRequest): ResponseFormat | undefined {
  const format = request.response_format;
  if (format === null || format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, schema, strict } = format.json_schema;
  return { type: 'json_schema', name, schema: schema ?? {}, ...(strict === null || strict === undefined ? {} : { strict }) };
}

export function toDomainToolChoice(request: ChatCompletionRequest): ToolChoice {
  const choice = request.tool_choice;
  if (choice === null || choice === undefined) return 'auto';
  return typeof choice === 'string' ? choice : { name: choice.function.name };
}

export function toDomainSampling(request: ChatCompletionRequest, defaults: SamplingDefaults): SamplingOptions {
  return domainSampling(
    {
      maxTokens: request.max_completion_tokens ?? request.max_tokens,
      temperature: request.temperature,
      topP: request.top_p,
      topK: request.top_k,
      stop: request.stop === null || request.stop === undefined ? [] : [request.stop].flat(),
      seed: request.seed,
      n: request.n,
      topLogprobs: request.logprobs === true ? (request.top_logprobs ?? 0) : 0,
    },
    defaults,
  );
}

/** Wire form of one token's log-prob, as OpenAI returns it. */
export interface WireTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}
