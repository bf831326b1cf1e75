/**
 * Wire shapes of OpenAI-style `POST /v1/chat/completions` streaming as vLLM, SGLang, Ollama and
 * OpenAI send it (engines.md §1.2, §2.2, §4), and the one seam converting them to and from
 * clawrl's camelCase types. vLLM extras: `return_token_ids` → `prompt_token_ids` on the first
 * chunk and `choices[].token_ids` per chunk.
 */
import { z } from 'zod';
import type { JsonStringMemo } from './json-string-memo.js';
import type { ChatMessage, ResponseFormat, SamplingOptions, ToolChoice, ToolDefinition } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { isTokenIdArray, type PromptIdsParser } from './prompt-ids-parser.js';

export type ChatFlavor = 'vllm' | 'sglang' | 'openai';

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

interface WireMessage {
  role: string;
  content: string | null;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
  name?: string;
}

interface WireTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

type WireToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

type WireResponseFormat = { type: 'json_object' } | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean } };

export interface WireChatRequest {
  model: string;
  messages: WireMessage[];
  tools?: WireTool[];
  tool_choice?: WireToolChoice;
  response_format?: WireResponseFormat;
  n: number;
  temperature: number;
  top_p: number;
  top_k?: number;
  seed?: number;
  stop?: string[];
  max_tokens?: number;
  logprobs?: boolean;
  top_logprobs?: number;
  return_token_ids?: boolean;
  stream: true;
  stream_options: { include_usage: true };
}

export interface ChatRequestInput {
  model: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  toolChoice: ToolChoice;
  sampling: SamplingOptions;
  responseFormat?: ResponseFormat;
}

function toWireResponseFormat(format: ResponseFormat): WireResponseFormat {
  if (format.type === 'json_object') return { type: 'json_object' };
  return { type: 'json_schema', json_schema: { name: format.name, schema: format.schema, ...(format.strict === undefined ? {} : { strict: format.strict }) } };
}

function toWireMessage(message: ChatMessage): WireMessage {
  const toolCalls = message.toolCalls ?? [];
  return {
    role: message.role,
    content: message.content === '' && toolCalls.length > 0 ? null : message.content,
    ...(toolCalls.length > 0
      ? { tool_calls: toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) }
      : {}),
    ...(message.toolCallId === undefined ? {} : { tool_call_id: message.toolCallId }),
    ...(message.name === undefined ? {} : { name: message.name }),
  };
}

function toWireToolChoice(choice: ToolChoice): WireToolChoice {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

function toWireTools(tools: ToolDefinition[]): WireTool[] {
  return tools.map((tool) => ({
    type: 'function' as const,
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      ...(tool.parameters === undefined ? {} : { parameters: tool.parameters }),
    },
  }));
}

/** vLLM's `/tokenize` chat form: the exact prompt ids its chat template produces. */
export interface WireTokenizeChatRequest {
  model: string;
  messages: WireMessage[];
  tools?: WireTool[];
  add_generation_prompt: true;
  add_special_tokens: false;
}

export function toWireTokenizeRequest(model: string, messages: ChatMessage[], tools: ToolDefinition[]): WireTokenizeChatRequest {
  return {
    model,
    messages: messages.map(toWireMessage),
    ...(tools.length > 0 ? { tools: toWireTools(tools) } : {}),
    add_generation_prompt: true,
    add_special_tokens: false,
  };
}

/**
 * Always streams, so tokens reach the caller as they are produced. vLLM is asked for token ids
 * and log-probs; plain OpenAI-compatible servers only for log-probs the caller asked for, since
 * some reject `logprobs` and none report ids. `top_k` is a vLLM/SGLang extension OpenAI rejects.
 */
export function toWireChatRequest(input: ChatRequestInput, flavor: ChatFlavor): WireChatRequest {
  const { sampling } = input;
  const wantsLogprobs = flavor === 'vllm' || sampling.topLogprobs > 0;
  return {
    model: input.model,
    messages: input.messages.map(toWireMessage),
    ...(input.tools.length > 0
      ? {
          tools: toWireTools(input.tools),
          tool_choice: toWireToolChoice(input.toolChoice),
        }
      : {}),
    ...(input.responseFormat === undefined ? {} : { response_format: toWireResponseFormat(input.responseFormat) }),
    n: sampling.n,
    temperature: sampling.temperature,
    top_p: sampling.topP,
    ...(sampling.topK !== undefined && sampling.topK > 0 && flavor !== 'openai' ? { top_k: sampling.topK } : {}),
    ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
    ...(sampling.stop.length > 0 ? { stop: sampling.stop } : {}),
    ...(sampling.maxTokens === undefined ? {} : { max_tokens: sampling.maxTokens }),
    ...(wantsLogprobs ? { logprobs: true, top_logprobs: sampling.topLogprobs } : {}),
    ...(flavor === 'vllm' ? { return_token_ids: true } : {}),
    stream: true,
    stream_options: { include_usage: true },
  };
}

/**
 * `JSON.stringify(request)` in parts whose UTF-8 bytes, one after another, are exactly its bytes,
 * except that long message texts come as remembered bytes from `memo` (agents resend the same
 * ~40 KB system prompt with every request): they are neither escaped, nor flattened into one
 * string, nor encoded, nor copied into a new buffer again; the socket writes them as they are.
 * Relies on the key order `toWireChatRequest` and `toWireMessage` build: model and messages
 * first, role and content first.
 */
export function wireChatRequestParts(request: WireChatRequest, memo: JsonStringMemo): (string | Buffer)[] {
  const { model, messages, ...rest } = request;
  const parts: (string | Buffer)[] = [];
  let text = `{"model":${JSON.stringify(model)},"messages":[`;
  messages.forEach((message, index) => {
    if (index > 0) text += ',';
    if (typeof message.content !== 'string') {
      text += JSON.stringify(message);
      return;
    }
    const { role, content, ...others } = message;
    text += `{"role":${JSON.stringify(role)},"content":`;
    const remembered = memo.jsonBytesOf(content);
    if (remembered === undefined) {
      text += JSON.stringify(content);
    } else {
      parts.push(text, remembered);
      text = '';
    }
    const othersJson = JSON.stringify(others);
    text += othersJson === '{}' ? '}' : `,${othersJson.slice(1)}`;
  });
  parts.push(`${text}],${JSON.stringify(rest).slice(1)}`);
  return parts;
}

/**
 * Token id arrays are validated with one loop instead of a schema per element: a prompt of 11k
 * ids arrives on every request, and per-element parsing cost a millisecond each time.
 */
export const tokenIdsSchema = z.custom<number[]>(isTokenIdArray, 'expected an array of integer token ids');

const alternativeSchema = z.object({ token: z.string().nullish(), logprob: z.number().nullish() });

const logprobEntrySchema = z.object({
  token: z.string().nullish(),
  logprob: z.number().nullish(),
  top_logprobs: z.array(alternativeSchema).nullish(),
});

const toolCallDeltaSchema = z.object({
  index: z.number().int().nullish(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().int().nonnegative(),
        delta: z.object({ content: z.string().nullish(), tool_calls: z.array(toolCallDeltaSchema).nullish() }).nullish(),
        logprobs: z.object({ content: z.array(logprobEntrySchema).nullish() }).nullish(),
        finish_reason: z.string().nullish(),
        token_ids: tokenIdsSchema.nullish(),
      }),
    )
    .nullish(),
  prompt_token_ids: tokenIdsSchema.nullish(),
  usage: z.object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() }).nullish(),
});

export interface ChunkLogprob {
  token: string;
  /** NaN when the server sent none. */
  logprob: number;
  top: { token: string; logprob: number }[];
}

export interface ChunkToolCallDelta {
  index: number | null;
  id: string | null;
  name: string | null;
  argumentsDelta: string;
}

export interface ChatChunkChoice {
  index: number;
  content: string;
  toolCalls: ChunkToolCallDelta[];
  tokenIds: number[] | null;
  logprobs: ChunkLogprob[];
  finishReason: string | null;
}

export interface ChatChunk {
  promptTokenIds: number[] | null;
  usage: { promptTokens: number; completionTokens: number } | null;
  choices: ChatChunkChoice[];
}

/**
 * Parses one SSE `data:` payload; malformed payloads are the upstream's fault. With `promptIds`,
 * vLLM's first chunk is parsed without parsing again the prompt ids it shares with recent prompts;
 * the result (and any error) is the same as without.
 */
export function parseChatChunk(data: string, promptIds?: PromptIdsParser): ChatChunk {
  const known = promptIds?.parseChunk(data);
  let json: unknown = known?.json;
  if (known === undefined) {
    try {
      json = JSON.parse(data);
    } catch (error) {
      throw new ClawrlError('upstream_error', `upstream sent a malformed stream chunk: ${data.slice(0, 200)}`, { cause: error });
    }
  }
  const parsed = chunkSchema.safeParse(json);
  if (!parsed.success) {
    throw new ClawrlError('upstream_error', `upstream sent an unexpected stream chunk: ${parsed.error.message}`, { cause: parsed.error });
  }
  const wire = parsed.data;
  return {
    promptTokenIds: known?.promptTokenIds ?? wire.prompt_token_ids ?? null,
    usage: wire.usage ? { promptTokens: wire.usage.prompt_tokens ?? 0, completionTokens: wire.usage.completion_tokens ?? 0 } : null,
    choices: (wire.choices ?? []).map((choice) => ({
      index: choice.index,
      content: choice.delta?.content ?? '',
      toolCalls: (choice.delta?.tool_calls ?? []).map((call) => ({
        index: call.index ?? null,
        id: call.id ?? null,
        name: call.function?.name ?? null,
        argumentsDelta: call.function?.arguments ?? '',
      })),
      tokenIds: choice.token_ids ?? null,
      logprobs: (choice.logprobs?.content ?? []).map((entry) => ({
        token: entry.token ?? '',
        logprob: entry.logprob ?? Number.NaN,
        top: (entry.top_logprobs ?? []).map((alternative) => ({ token: alternative.token ?? '', logprob: alternative.logprob ?? Number.NaN })),
      })),
      finishReason: choice.finish_reason ?? null,
    })),
  };
}
