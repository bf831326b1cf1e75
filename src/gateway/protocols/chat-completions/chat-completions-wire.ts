/** Builds chat-completion response bodies and stream chunks in the OpenAI wire shape. */
import type { ChoiceResult, FinishReason, SampledToken } from '../../../spec/inference-engine.js';
import type { WireTokenLogprob, WireToolCall } from './chat-completions-api.js';

const encoder = new TextEncoder();

function bytesOf(text: string): number[] {
  return Array.from(encoder.encode(text));
}

export function wireLogprobs(tokens: readonly SampledToken[], topLogprobs: number): WireTokenLogprob[] {
  return tokens.map((token) => ({
    token: token.text,
    logprob: token.logprob,
    bytes: bytesOf(token.text),
    top_logprobs: token.top.slice(0, topLogprobs).map((alternative) => ({
      token: alternative.text,
      logprob: alternative.logprob,
      bytes: bytesOf(alternative.text),
    })),
  }));
}

/** OpenAI has no finish reason for aborted or failed generations; clients see what they got as a stop. */
export function wireFinishReason(reason: FinishReason): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  return reason === 'aborted' || reason === 'error' ? 'stop' : reason;
}

export function wireToolCalls(choice: ChoiceResult): WireToolCall[] {
  return choice.toolCalls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
}

export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

export function completionBody(
  identity: CompletionIdentity,
  choices: readonly ChoiceResult[],
  logprobsOf: ((index: number) => WireTokenLogprob[]) | null,
  usage: { promptTokens: number; completionTokens: number },
): Record<string, unknown> {
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: choices.map((choice) => {
      const toolCalls = wireToolCalls(choice);
      return {
        index: choice.index,
        message: {
          role: 'assistant',
          content: choice.message.content === '' && toolCalls.length > 0 ? null : choice.message.content,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          refusal: null,
        },
        logprobs: logprobsOf === null ? null : { content: logprobsOf(choice.index), refusal: null },
        finish_reason: wireFinishReason(choice.finishReason),
      };
    }),
    usage: wireUsage(usage),
  };
}

export function wireUsage(usage: { promptTokens: number; completionTokens: number }): Record<string, number> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

export interface ChunkChoice {
  index: number;
  delta: Record<string, unknown>;
  logprobs?: { content: WireTokenLogprob[]; refusal: null } | null;
  finish_reason: string | null;
}

export function chunkData(identity: CompletionIdentity, choices: ChunkChoice[], usage?: Record<string, number>): string {
  const body: Record<string, unknown> = {
    id: identity.id,
    object: 'chat.completion.chunk',
    created: identity.created,
    model: identity.model,
    choices,
  };
  if (usage !== undefined) body.usage = usage;
  return `data: ${JSON.stringify(body)}\n\n`;
}
