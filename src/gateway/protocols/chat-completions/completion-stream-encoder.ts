/**
 * The SSE encoding of a streamed chat completion: `chat.completion.chunk`s as the engine produces
 * tokens, the finish chunks and usage once the turn is recorded, then `data: [DONE]`.
 */
import type { SampledToken } from '../../../spec/inference-engine.js';
import { chunkData, wireFinishReason, wireLogprobs, wireUsage, type ChunkChoice, type CompletionIdentity } from './chat-completions-wire.js';
import { wireErrorOf } from '../../error-response.js';
import type { TurnStreamEncoder } from '../../write-turn-stream.js';

export interface CompletionStreamEncoderOptions {
  identity: CompletionIdentity;
  includeUsage: boolean;
  /** Alternatives per token when the client asked for log-probs; null when it did not. */
  topLogprobs: number | null;
}

export function createCompletionStreamEncoder(options: CompletionStreamEncoderOptions): TurnStreamEncoder {
  const { identity, topLogprobs } = options;
  const started = new Set<number>();
  const pendingTokens = new Map<number, SampledToken[]>();
  const finishChunks: ChunkChoice[] = [];

  function takeLogprobs(choiceIndex: number): Pick<ChunkChoice, 'logprobs'> {
    if (topLogprobs === null) return {};
    const tokens = pendingTokens.get(choiceIndex) ?? [];
    pendingTokens.delete(choiceIndex);
    return { logprobs: { content: wireLogprobs(tokens, topLogprobs), refusal: null } };
  }

  function deltaChunk(choiceIndex: number, delta: Record<string, unknown>): string {
    const first = !started.has(choiceIndex);
    started.add(choiceIndex);
    const choice: ChunkChoice = {
      index: choiceIndex,
      delta: first ? { role: 'assistant', ...delta } : delta,
      ...takeLogprobs(choiceIndex),
      finish_reason: null,
    };
    return chunkData(identity, [choice]);
  }

  return {
    // The first chunk carries the first content: a client's time to first token is its first chunk.
    start: () => '',
    event(event) {
      switch (event.type) {
        case 'start':
          return '';
        case 'text-delta':
          return event.text === '' ? '' : deltaChunk(event.choiceIndex, { content: event.text });
        case 'tool-call-delta': {
          const call: Record<string, unknown> = { index: event.toolCallIndex };
          if (event.id !== undefined) Object.assign(call, { id: event.id, type: 'function' });
          call.function = { ...(event.name === undefined ? {} : { name: event.name }), arguments: event.argumentsDelta };
          return deltaChunk(event.choiceIndex, { tool_calls: [call] });
        }
        case 'tokens':
          if (topLogprobs !== null) {
            const pending = pendingTokens.get(event.choiceIndex) ?? [];
            pending.push(...event.tokens);
            pendingTokens.set(event.choiceIndex, pending);
          }
          return '';
        case 'choice-end': {
          const leading = started.has(event.choiceIndex) ? '' : deltaChunk(event.choiceIndex, { content: '' });
          finishChunks.push({
            index: event.choiceIndex,
            delta: {},
            ...takeLogprobs(event.choiceIndex),
            finish_reason: wireFinishReason(event.finishReason),
          });
          return leading;
        }
      }
    },
    end(result) {
      let tail = finishChunks.map((choice) => chunkData(identity, [choice])).join('');
      if (options.includeUsage) tail += chunkData(identity, [], wireUsage(result.usage));
      return `${tail}data: [DONE]\n\n`;
    },
    failure(error) {
      return `data: ${JSON.stringify(wireErrorOf(error))}\n\ndata: [DONE]\n\n`;
    },
  };
}
