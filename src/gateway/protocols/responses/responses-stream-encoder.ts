/**
 * The SSE encoding of a streamed Responses API turn: `response.created` and
 * `response.in_progress` when the engine starts; a message item (`output_item.added`,
 * `content_part.added`, `output_text.delta`s, then the `.done` events) for the text and a
 * `function_call` item (`function_call_arguments.delta`s and `.done`) per tool call; and, once the
 * turn is recorded, `response.completed` (or `response.incomplete` at the token limit) with usage; a failure
 * mid-stream is an `error` event and `response.failed`.
 * Every event carries its `sequence_number`.
 */
import type { ToolCall } from '../../../spec/chat.js';
import type { ClawrlError } from '../../../spec/clawrl-error.js';
import { wireErrorOf } from '../../error-response.js';
import {
  functionCallItemId,
  messageItemId,
  wireFunctionCallItem,
  wireMessageItem,
  wireOutput,
  wireOutputText,
  wireResponse,
  type ResponseIdentity,
} from './responses-api.js';
import type { TurnStreamEncoder } from '../../write-turn-stream.js';

export function createResponsesStreamEncoder(identity: ResponseIdentity): TurnStreamEncoder {
  let sequence = 0;
  let nextOutputIndex = 0;
  let message: { outputIndex: number; text: string } | null = null;
  let call: { outputIndex: number; index: number; call: ToolCall } | null = null;
  let opened = false;

  function sse(type: string, data: Record<string, unknown>): string {
    const body = { type, sequence_number: sequence, ...data };
    sequence += 1;
    return `event: ${type}\ndata: ${JSON.stringify(body)}\n\n`;
  }

  function openMessage(): string {
    message = { outputIndex: nextOutputIndex, text: '' };
    nextOutputIndex += 1;
    opened = true;
    const itemId = messageItemId(identity.id);
    return (
      sse('response.output_item.added', { output_index: message.outputIndex, item: wireMessageItem(identity.id, '', 'in_progress') }) +
      sse('response.content_part.added', { item_id: itemId, output_index: message.outputIndex, content_index: 0, part: wireOutputText('') })
    );
  }

  function appendText(delta: string): string {
    if (message === null) return '';
    message.text += delta;
    return sse('response.output_text.delta', {
      item_id: messageItemId(identity.id),
      output_index: message.outputIndex,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  function closeMessage(): string {
    if (message === null) return '';
    const { outputIndex, text } = message;
    message = null;
    const itemId = messageItemId(identity.id);
    return (
      sse('response.output_text.done', { item_id: itemId, output_index: outputIndex, content_index: 0, text, logprobs: [] }) +
      sse('response.content_part.done', { item_id: itemId, output_index: outputIndex, content_index: 0, part: wireOutputText(text) }) +
      sse('response.output_item.done', { output_index: outputIndex, item: wireMessageItem(identity.id, text, 'completed') })
    );
  }

  function closeCall(): string {
    if (call === null) return '';
    const { outputIndex, index, call: done } = call;
    call = null;
    return (
      sse('response.function_call_arguments.done', {
        item_id: functionCallItemId(identity.id, index),
        output_index: outputIndex,
        name: done.name,
        arguments: done.arguments,
      }) + sse('response.output_item.done', { output_index: outputIndex, item: wireFunctionCallItem(identity.id, index, done, 'completed') })
    );
  }

  return {
    start() {
      const response = wireResponse(identity, { status: 'in_progress' });
      return sse('response.created', { response }) + sse('response.in_progress', { response });
    },
    event(event) {
      switch (event.type) {
        case 'start':
          return '';
        case 'text-delta': {
          if (event.text === '') return '';
          const opening = message === null ? closeCall() + openMessage() : '';
          return opening + appendText(event.text);
        }
        case 'tool-call-delta': {
          let text = '';
          if (call === null || call.index !== event.toolCallIndex) {
            text += closeMessage() + closeCall();
            call = { outputIndex: nextOutputIndex, index: event.toolCallIndex, call: { id: event.id ?? '', name: event.name ?? '', arguments: '' } };
            nextOutputIndex += 1;
            opened = true;
            text += sse('response.output_item.added', {
              output_index: call.outputIndex,
              item: wireFunctionCallItem(identity.id, call.index, call.call, 'in_progress'),
            });
          }
          if (event.argumentsDelta === '') return text;
          call.call.arguments += event.argumentsDelta;
          return (
            text +
            sse('response.function_call_arguments.delta', {
              item_id: functionCallItemId(identity.id, call.index),
              output_index: call.outputIndex,
              delta: event.argumentsDelta,
            })
          );
        }
        case 'tokens':
          return '';
        case 'choice-end':
          // A reply with neither text nor calls is still one (empty) message, as in the JSON body.
          return (opened ? '' : openMessage()) + closeMessage() + closeCall();
      }
    },
    end(result) {
      const choice = result.choices[0];
      const output = choice === undefined ? [] : wireOutput(identity.id, choice);
      const status = choice?.finishReason === 'length' ? 'incomplete' : 'completed';
      return sse(`response.${status}`, { response: wireResponse(identity, { status, output, usage: result.usage }) });
    },
    // As OpenAI does: an `error` event, then `response.failed` with the error on the response.
    failure(error: ClawrlError) {
      const { message: text, code, param } = wireErrorOf(error).error;
      return (
        sse('error', { code, message: text, param }) +
        sse('response.failed', { response: wireResponse(identity, { status: 'failed', error: { code, message: text } }) })
      );
    },
  };
}
