/**
 * Translates parsed chat-completion chunks into upstream events, one chunk at a time.
 *
 * Token pairing: vLLM sends, per chunk and choice, the sampled ids in `token_ids` and one
 * `logprobs.content` entry per id, in the same order; they are paired by position. When ids are
 * missing or the counts differ (OpenAI, Ollama, SGLang chat, old vLLM), tokens are still
 * reported for their log-probs but with id -1, which makes the result non-trainable.
 *
 * Top alternatives carry id -1: the chat API names them only by text, and mapping text back to
 * ids would mean re-tokenizing. A server run with `--return-tokens-as-token-ids` spells tokens
 * `token_id:<id>`, which is parsed back into the id.
 */
import type { FinishReason, SampledToken, TokenLogprob } from '../../spec/inference-engine.js';
import type { ChatChunk, ChatChunkChoice, ChunkLogprob } from './chat-completions-api.js';
import type { UpstreamEvent } from './generation-driver.js';

const tokenIdPattern = /^token_id:(\d+)$/;

function parseTokenText(token: string): { id: number; text: string } {
  const match = tokenIdPattern.exec(token);
  return match?.[1] === undefined ? { id: -1, text: token } : { id: Number(match[1]), text: '' };
}

function toTokenLogprob(entry: { token: string; logprob: number }): TokenLogprob {
  const parsed = parseTokenText(entry.token);
  return { id: parsed.id, text: parsed.text, logprob: entry.logprob };
}

function toSampledToken(entry: ChunkLogprob, id: number | undefined): SampledToken {
  const fromText = parseTokenText(entry.token);
  return {
    id: id ?? fromText.id,
    text: fromText.id === -1 ? entry.token : fromText.text,
    logprob: entry.logprob,
    top: entry.top.map(toTokenLogprob),
  };
}

export function toFinishReason(wire: string): FinishReason {
  switch (wire) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    case 'abort':
      return 'aborted';
    case 'error':
      return 'error';
    default:
      return 'stop';
  }
}

export class ChatStreamTranslator {
  private sawFirstChunk = false;
  /** Per choice, the tool calls seen so far (index → id). */
  private readonly toolCallIds = new Map<number, Map<number, string>>();

  push(chunk: ChatChunk): UpstreamEvent[] {
    const events: UpstreamEvent[] = [];
    if (!this.sawFirstChunk) {
      this.sawFirstChunk = true;
      events.push({ type: 'prompt', promptTokenIds: chunk.promptTokenIds ?? [] });
    }
    for (const choice of chunk.choices) this.translateChoice(choice, events);
    if (chunk.usage !== null) events.push({ type: 'usage', ...chunk.usage });
    return events;
  }

  private translateChoice(choice: ChatChunkChoice, events: UpstreamEvent[]): void {
    const choiceIndex = choice.index;
    if (choice.content !== '') events.push({ type: 'text-delta', choiceIndex, text: choice.content });
    let calls = this.toolCallIds.get(choiceIndex);
    if (calls === undefined) {
      calls = new Map();
      this.toolCallIds.set(choiceIndex, calls);
    }
    for (const call of choice.toolCalls) {
      // Servers that omit `index` send a whole call per delta when it carries an id.
      const toolCallIndex = call.index ?? (call.id !== null || calls.size === 0 ? calls.size : calls.size - 1);
      const knownId = calls.get(toolCallIndex);
      if (knownId === undefined) {
        const id = call.id ?? `call_${choiceIndex}_${toolCallIndex}`;
        calls.set(toolCallIndex, id);
        events.push({ type: 'tool-call-delta', choiceIndex, toolCallIndex, id, name: call.name ?? '', argumentsDelta: call.argumentsDelta });
      } else if (call.argumentsDelta !== '') {
        events.push({ type: 'tool-call-delta', choiceIndex, toolCallIndex, argumentsDelta: call.argumentsDelta });
      }
    }
    const ids = choice.tokenIds;
    const paired = ids !== null && ids.length === choice.logprobs.length;
    if (ids !== null && !paired) events.push({ type: 'inexact', choiceIndex });
    if (choice.logprobs.length > 0) {
      events.push({
        type: 'tokens',
        choiceIndex,
        tokens: choice.logprobs.map((entry, position) => toSampledToken(entry, paired ? ids[position] : undefined)),
      });
    }
    if (choice.finishReason !== null) events.push({ type: 'choice-end', choiceIndex, finishReason: toFinishReason(choice.finishReason) });
  }
}
