/**
 * The `ChatRenderer` seam: a model's tokenizer and chat template, used wherever clawrl must turn
 * messages into the exact token ids a model sees (the local engine, SGLang's `/generate`, OPD
 * teacher prompts) and turn sampled ids back into text and tool calls.
 */
import type { ChatMessage, ToolDefinition } from './chat.js';

/** A piece of parsed assistant output. */
export type AssistantOutputDelta =
  | { type: 'text'; text: string }
  /** A tool call begins; `index` counts calls within the reply. */
  | { type: 'tool-call-start'; index: number; id: string; name: string }
  | { type: 'tool-call-arguments'; index: number; text: string };

/**
 * Incremental parser of generated text into visible text and tool calls (Hermes/Qwen
 * `<tool_call>{"name":..., "arguments":...}</tool_call>` blocks). Text that might be the start of a
 * tool-call tag is held back until it is decided.
 */
export interface AssistantOutputParser {
  push(text: string): AssistantOutputDelta[];
  /** Flushes held-back text; an unterminated tool call is returned as text. */
  finish(): AssistantOutputDelta[];
}

/** Incremental detokenizer: never emits half a UTF-8 character. */
export interface StreamDecoder {
  /** Returns the text that became complete with this token (possibly empty). */
  push(tokenId: number): string;
  /** Returns whatever is still buffered. */
  finish(): string;
}

export interface ChatRenderer {
  /**
   * Renders the conversation with the chat template (tools included, generation prompt added)
   * and tokenizes it without adding special tokens a second time.
   */
  renderPrompt(messages: ChatMessage[], tools: ToolDefinition[]): number[];
  /** The template's text for the same input (debugging, judges that need text). */
  renderText(messages: ChatMessage[], tools: ToolDefinition[]): string;
  encode(text: string): number[];
  decode(tokenIds: number[]): string;
  /** The text of one token, for logprob displays. */
  tokenText(tokenId: number): string;
  /** Ids that end an assistant turn (eos, `<|im_end|>`, ...). */
  readonly stopTokenIds: readonly number[];
  readonly vocabularySize: number;
  createStreamDecoder(): StreamDecoder;
  createOutputParser(): AssistantOutputParser;
}
