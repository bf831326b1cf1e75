/**
 * The SSE encoding of a streamed Anthropic Messages turn: `message_start` (with the prompt's
 * token count) and a `ping` when the engine starts; a `content_block_start` /
 * `content_block_delta`s (`text_delta`, `input_json_delta`) / `content_block_stop` per text run and
 * per tool call; and, once the turn is recorded, `message_delta` with the stop reason and usage,
 * then `message_stop`.
 */
import type { ClawrlError } from '../../../spec/clawrl-error.js';
import type { FinishReason } from '../../../spec/inference-engine.js';
import { anthropicErrorOf, wireMessage, wireStopReason } from './messages-api.js';
import type { TurnStreamEncoder } from '../../write-turn-stream.js';

function sse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

export function createMessagesStreamEncoder(identity: { id: string; model: string }, inputTokens: number): TurnStreamEncoder {
  let nextIndex = 0;
  let open: { index: number; kind: 'text' } | { index: number; kind: 'tool'; toolCallIndex: number } | null = null;
  let finishReason: FinishReason = 'stop';

  function close(): string {
    if (open === null) return '';
    const { index } = open;
    open = null;
    return sse('content_block_stop', { index });
  }

  function takeIndex(): number {
    const index = nextIndex;
    nextIndex += 1;
    return index;
  }

  return {
    start() {
      const message = wireMessage(identity, { content: [], stopReason: null, inputTokens, outputTokens: 0 });
      return sse('message_start', { message }) + sse('ping', {});
    },
    event(event) {
      switch (event.type) {
        case 'start':
        case 'tokens':
          return '';
        case 'text-delta': {
          if (event.text === '') return '';
          let text = '';
          if (open?.kind !== 'text') {
            text += close();
            const index = takeIndex();
            open = { index, kind: 'text' };
            text += sse('content_block_start', { index, content_block: { type: 'text', text: '' } });
          }
          return text + sse('content_block_delta', { index: open.index, delta: { type: 'text_delta', text: event.text } });
        }
        case 'tool-call-delta': {
          let text = '';
          if (open?.kind !== 'tool' || open.toolCallIndex !== event.toolCallIndex) {
            text += close();
            const index = takeIndex();
            open = { index, kind: 'tool', toolCallIndex: event.toolCallIndex };
            text += sse('content_block_start', {
              index,
              content_block: { type: 'tool_use', id: event.id ?? '', name: event.name ?? '', input: {} },
            });
          }
          if (event.argumentsDelta === '') return text;
          return text + sse('content_block_delta', { index: open.index, delta: { type: 'input_json_delta', partial_json: event.argumentsDelta } });
        }
        case 'choice-end': {
          finishReason = event.finishReason;
          // A reply with neither text nor calls is one empty text block, as in the JSON body.
          const empty = nextIndex === 0 ? sse('content_block_start', { index: takeIndex(), content_block: { type: 'text', text: '' } }) + sse('content_block_stop', { index: 0 }) : '';
          return close() + empty;
        }
      }
    },
    end(result) {
      return (
        sse('message_delta', {
          delta: { stop_reason: wireStopReason(result.choices[0]?.finishReason ?? finishReason), stop_sequence: null },
          usage: { input_tokens: result.usage.promptTokens, output_tokens: result.usage.completionTokens },
        }) + sse('message_stop', {})
      );
    },
    failure(error: ClawrlError) {
      return sse('error', { error: anthropicErrorOf(error).error });
    },
  };
}
