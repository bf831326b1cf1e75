/**
 * Domain chat types: what a conversation is once the wire format has been validated and
 * normalized (text content parts joined, camelCase; images refused, as no served model takes them). Wire types live only in the
 * gateway protocols' `*-api.ts` files (`gateway/protocols/`) and the remote engines' `*-api.ts` files.
 */

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments exactly as the model produced them: a JSON text, possibly invalid. */
  arguments: string;
}

export interface ChatMessage {
  role: ChatRole;
  /** Text content; content parts are joined with no separator. Empty for pure tool-call replies. */
  content: string;
  /** Assistant tool calls, in order. */
  toolCalls?: ToolCall[];
  /** For `tool` messages: the call this result answers. */
  toolCallId?: string;
  name?: string;
  /**
   * What the client sent with this message that clawrl does not read (Anthropic's `cache_control`
   * and thinking `signature`, a Responses item's `id` or `encrypted_content`, ...), kept for the
   * record as sent, one entry per wire piece, `from` naming it. Never rendered into the prompt and
   * no part of the reply's identity.
   */
  providerFields?: Record<string, unknown>[];
  /**
   * Assistant reasoning the client sent back (Anthropic `thinking` blocks, Responses `reasoning`
   * items), kept for the record. It is not part of the reply's identity (`replyKeyOf`).
   */
  reasoning?: string;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters?: Record<string, unknown>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** Structured output a request asks for (OpenAI's `response_format`); absent: free text. */
export type ResponseFormat = { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean };

export interface SamplingOptions {
  /** Upper bound on generated tokens; undefined means "until the context is full". */
  maxTokens?: number;
  /** 0 means greedy. */
  temperature: number;
  topP: number;
  /** 0 or undefined means no top-k filter. */
  topK?: number;
  stop: string[];
  seed?: number;
  /** Number of choices to sample for the same prompt. */
  n: number;
  /** How many alternatives to return per token (0 = only the sampled token's log-prob). */
  topLogprobs: number;
}

export const defaultSamplingOptions: SamplingOptions = {
  temperature: 1,
  topP: 1,
  stop: [],
  n: 1,
  topLogprobs: 0,
};
