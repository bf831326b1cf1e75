/**
 * Wire types of the OpenAI Responses API (`POST /v1/responses`) as clawrl accepts and returns
 * them, and their conversion to domain types. As with chat completions, what clawrl interprets is
 * checked strictly and the many optional fields clients send are tolerated.
 */
import { z } from 'zod';
import type { ChatMessage, ToolCall, ToolChoice, ToolDefinition } from '../../../spec/chat.js';
import type { ChoiceResult } from '../../../spec/inference-engine.js';
import { UnsupportedContentError } from '../domain-request.js';
import { keepUnreadFields } from '../provider-fields.js';

const textPart = z.object({ type: z.enum(['input_text', 'output_text']), text: z.string() }).loose();
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() }).loose();
const mediaPart = z.object({ type: z.enum(['input_image', 'input_file', 'input_audio']) }).loose();
const content = z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, refusalPart, mediaPart]))]);

const messageItem = z
  .object({
    type: z.literal('message').optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content,
  })
  .loose();

const functionCallItem = z
  .object({ type: z.literal('function_call'), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string() })
  .loose();

const functionCallOutputItem = z
  .object({
    type: z.literal('function_call_output'),
    call_id: z.string().min(1),
    output: z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, mediaPart]))]),
  })
  .loose();

/** Reasoning items come back from clients that keep them; their summary text is kept for the record. */
const reasoningItem = z
  .object({
    type: z.literal('reasoning'),
    summary: z.array(z.object({ text: z.string() }).loose()).optional(),
    content: z.array(z.object({ text: z.string() }).loose()).nullish(),
  })
  .loose();

const inputItem = z.union([messageItem, functionCallItem, functionCallOutputItem, reasoningItem]);

const toolName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'tool names are 1-64 letters, digits, _ or -');

const functionTool = z
  .object({
    type: z.literal('function'),
    name: toolName,
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  })
  .loose();

const toolChoice = z.union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), name: toolName }).loose()]);

export const responsesRequestSchema = z
  .object({
    model: z.string().min(1),
    input: z.union([z.string(), z.array(inputItem).min(1, 'input must not be empty')]),
    instructions: z.string().nullish(),
    tools: z.array(z.object({ type: z.string() }).loose()).nullish(),
    tool_choice: toolChoice.nullish(),
    max_output_tokens: z.number().int().positive().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    stream: z.boolean().nullish(),
    store: z.boolean().nullish(),
    previous_response_id: z.string().min(1).nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
    text: z.object({ format: z.object({ type: z.string() }).loose().nullish() }).loose().nullish(),
  })
  .loose();

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
type WireTool = z.infer<typeof functionTool>;

function contentText(value: z.infer<typeof content> | z.infer<typeof functionCallOutputItem>['output'], path: string): string {
  if (typeof value === 'string') return value;
  return value
    .map((part) => {
      if (part.type === 'refusal') return part.refusal;
      if (part.type === 'input_text' || part.type === 'output_text') return part.text;
      throw new UnsupportedContentError(`${path}: content part type '${part.type}' is not supported: the model takes text only`);
    })
    .join('');
}

/**
 * The function tools the model is offered: function tools, and the function tools inside a
 * `namespace` (Codex groups its sub-agent tools so). Hosted tools (`web_search`, `file_search`,
 * `local_shell`, ...) run on OpenAI's servers or need a protocol of their own: they are not offered
 * to the model, rather than refusing a client such as Codex that always sends them.
 */
export function toDomainResponseTools(request: ResponsesRequest): { tools: ToolDefinition[]; wire: WireTool[] } {
  const parse = (tool: unknown, path: string): WireTool => {
    const parsed = functionTool.safeParse(tool);
    if (!parsed.success) throw new UnsupportedContentError(`${path}: ${parsed.error.issues[0]?.message ?? 'invalid function tool'}`);
    return parsed.data;
  };
  const wire = (request.tools ?? []).flatMap((tool, index): WireTool[] => {
    if (tool.type === 'function') return [parse(tool, `tools[${index}]`)];
    if (tool.type !== 'namespace') return [];
    const inner = (tool as { tools?: unknown }).tools;
    if (!Array.isArray(inner)) throw new UnsupportedContentError(`tools[${index}]: a namespace needs its tools`);
    return inner.filter((entry: { type?: unknown }) => entry?.type === 'function').map((entry, innerIndex) => parse(entry, `tools[${index}].tools[${innerIndex}]`));
  });
  const tools = wire.map((tool) => ({
    name: tool.name,
    ...(tool.description === null || tool.description === undefined ? {} : { description: tool.description }),
    ...(tool.parameters === null || tool.parameters === undefined ? {} : { parameters: tool.parameters }),
  }));
  return { tools, wire };
}

export function toDomainResponseToolChoice(request: ResponsesRequest): ToolChoice {
  const choice = request.tool_choice;
  if (choice === null || choice === undefined) return 'auto';
  return typeof choice === 'string' ? choice : { name: choice.name };
}

/**
 * The input items as domain messages. A `function_call` directly after an assistant message (or
 * another call) joins that message's tool calls, as the Responses API splits one assistant reply
 * into a message item and call items: the reply then compares equal to the one recorded, which is
 * how a resent conversation finds its session again.
 */
export function toDomainResponseMessages(request: ResponsesRequest): ChatMessage[] {
  if (typeof request.input === 'string') return [{ role: 'user', content: request.input }];
  const messages: ChatMessage[] = [];
  let reasoning: string[] = [];
  /** Reasoning items' unread fields (`id`, `encrypted_content`), kept with the message their text joins. */
  let reasoningItems: { from: string; item: object }[] = [];
  const assistantForCall = (): ChatMessage => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') return last;
    const created: ChatMessage = { role: 'assistant', content: '' };
    messages.push(created);
    return created;
  };
  const keepReasoning = (message: ChatMessage) => {
    for (const { from, item } of reasoningItems) keepUnreadFields(message, from, item, ['type', 'summary', 'content']);
    reasoningItems = [];
    if (reasoning.length === 0) return;
    message.reasoning = reasoning.join('\n');
    reasoning = [];
  };
  const keepContentFields = (message: ChatMessage, path: string, parts: unknown) => {
    if (Array.isArray(parts)) parts.forEach((part: object, partIndex) => keepUnreadFields(message, `${path}.content[${partIndex}]`, part, ['type', 'text', 'refusal']));
  };
  request.input.forEach((item, index) => {
    const path = `input[${index}]`;
    if (item.type === 'function_call') {
      const message = assistantForCall();
      const call: ToolCall = { id: item.call_id, name: item.name, arguments: item.arguments };
      message.toolCalls = [...(message.toolCalls ?? []), call];
      keepUnreadFields(message, path, item, ['type', 'call_id', 'name', 'arguments']);
      keepReasoning(message);
      return;
    }
    if (item.type === 'function_call_output') {
      const message: ChatMessage = { role: 'tool', content: contentText(item.output, `${path}.output`), toolCallId: item.call_id };
      keepUnreadFields(message, path, item, ['type', 'call_id', 'output']);
      messages.push(message);
      return;
    }
    if (item.type === 'reasoning') {
      const texts = [...(item.summary ?? []), ...(item.content ?? [])].map((part) => part.text).filter((text) => text !== '');
      reasoning.push(...texts);
      reasoningItems.push({ from: path, item });
      return;
    }
    const text = contentText(item.content, `${path}.content`);
    const message: ChatMessage = item.role === 'assistant' ? { role: 'assistant', content: text } : { role: item.role === 'developer' ? 'system' : item.role, content: text };
    keepUnreadFields(message, path, item, ['type', 'role', 'content']);
    keepContentFields(message, path, item.content);
    if (item.role === 'assistant') keepReasoning(message);
    messages.push(message);
  });
  return messages;
}

/** Identity and echoed settings of one response, shared by its body and its stream events. */
export interface ResponseIdentity {
  id: string;
  createdAt: number;
  model: string;
  instructions: string | null;
  previousResponseId: string | null;
  store: boolean;
  maxOutputTokens: number | null;
  temperature: number;
  topP: number;
  toolChoice: ResponsesRequest['tool_choice'];
  tools: WireTool[];
  metadata: Record<string, string>;
}

export function messageItemId(responseId: string): string {
  return `msg_${responseId.slice('resp_'.length)}`;
}

export function functionCallItemId(responseId: string, index: number): string {
  return `fc_${responseId.slice('resp_'.length)}_${index}`;
}

export function wireMessageItem(responseId: string, text: string, status: 'in_progress' | 'completed'): Record<string, unknown> {
  return {
    type: 'message',
    id: messageItemId(responseId),
    status,
    role: 'assistant',
    content: status === 'completed' ? [wireOutputText(text)] : [],
  };
}

export function wireOutputText(text: string): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function wireFunctionCallItem(responseId: string, index: number, call: ToolCall, status: 'in_progress' | 'completed'): Record<string, unknown> {
  return { type: 'function_call', id: functionCallItemId(responseId, index), call_id: call.id, name: call.name, arguments: call.arguments, status };
}

/** A reply as output items: its text as a message (when there is text), then one item per tool call. */
export function wireOutput(responseId: string, choice: ChoiceResult): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = [];
  if (choice.message.content !== '' || choice.toolCalls.length === 0) items.push(wireMessageItem(responseId, choice.message.content, 'completed'));
  choice.toolCalls.forEach((call, index) => items.push(wireFunctionCallItem(responseId, index, call, 'completed')));
  return items;
}

/** The `response` object; `output` is empty and `usage` null until it has finished. */
export function wireResponse(
  identity: ResponseIdentity,
  state:
    | { status: 'in_progress' }
    | { status: 'failed'; error: { code: string; message: string } }
    | { status: 'completed' | 'incomplete'; output: Array<Record<string, unknown>>; usage: { promptTokens: number; completionTokens: number } },
): Record<string, unknown> {
  const finished = state.status === 'completed' || state.status === 'incomplete' ? state : null;
  return {
    id: identity.id,
    object: 'response',
    created_at: identity.createdAt,
    status: state.status,
    error: state.status === 'failed' ? state.error : null,
    incomplete_details: state.status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: identity.instructions,
    max_output_tokens: identity.maxOutputTokens,
    model: identity.model,
    output: finished?.output ?? [],
    parallel_tool_calls: true,
    previous_response_id: identity.previousResponseId,
    reasoning: { effort: null, summary: null },
    store: identity.store,
    temperature: identity.temperature,
    text: { format: { type: 'text' } },
    tool_choice: identity.toolChoice ?? 'auto',
    tools: identity.tools,
    top_p: identity.topP,
    truncation: 'disabled',
    usage:
      finished === null
        ? null
        : {
            input_tokens: finished.usage.promptTokens,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: finished.usage.completionTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: finished.usage.promptTokens + finished.usage.completionTokens,
          },
    metadata: identity.metadata,
  };
}
