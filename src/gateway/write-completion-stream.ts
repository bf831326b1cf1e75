/**
 * The SSE body of a streamed chat completion. Chunks go out as the engine produces tokens; the
 * turn is recorded when the engine ends, before the final chunks and `[DONE]`, so a client that
 * saw `[DONE]` knows its turn is durable. A client that goes away aborts the engine (through
 * `abort`); the rest of the generation is drained unsent and the partial turn is recorded as aborted.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import type { GenerateEvent, SampledToken } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { TurnStatus } from '../spec/records.js';
import { chunkData, wireFinishReason, wireLogprobs, wireUsage, type ChunkChoice, type CompletionIdentity } from './completion-wire.js';
import { wireErrorOf } from './error-response.js';
import type { TurnCapture } from './turn-capture.js';

/** Where the SSE text goes; a returned promise means "wait before writing more" (backpressure). */
export type CompletionSink = (text: string) => Promise<void> | undefined;

export interface CompletionStreamOptions {
  events: AsyncIterator<GenerateEvent>;
  capture: TurnCapture;
  identity: CompletionIdentity;
  includeUsage: boolean;
  /** Alternatives per token when the client asked for log-probs; null when it did not. */
  topLogprobs: number | null;
  /** Aborted when the client goes away. */
  abort: AbortController;
  now: () => number;
  /** Records the turn; resolves when it is durable. */
  finish: (status: TurnStatus, error: string | null) => Promise<void>;
  logger: Logger;
}

/** Streams the completion into `sink`; resolves once the turn is recorded and the last chunk written. */
export async function writeCompletionStream(options: CompletionStreamOptions, sink: CompletionSink): Promise<void> {
  const { events, capture, identity, topLogprobs, abort } = options;
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

  /** The SSE text one engine event produces ('' for none). */
  async function textOf(event: GenerateEvent): Promise<string> {
    capture.apply(event, options.now());
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
      case 'end': {
        await options.finish('completed', null);
        let tail = finishChunks.map((choice) => chunkData(identity, [choice])).join('');
        if (options.includeUsage) tail += chunkData(identity, [], wireUsage(event.result.usage));
        return `${tail}data: [DONE]\n\n`;
      }
    }
  }

  async function recordFailure(error: unknown): Promise<string> {
    const message = error instanceof Error ? error.message : String(error);
    await options.finish(abort.signal.aborted ? 'aborted' : 'failed', message).catch((recordError: unknown) => {
      options.logger.error('could not record a failed turn', { error: String(recordError) });
    });
    const wireError = ClawrlError.isInstance(error)
      ? wireErrorOf(error)
      : wireErrorOf(new ClawrlError('upstream_error', 'The inference engine failed during generation.'));
    return `data: ${JSON.stringify(wireError)}\n\ndata: [DONE]\n\n`;
  }

  /** The client is gone: let the engine observe the abort so the partial turn is complete, then record it. */
  async function recordDisconnect(): Promise<void> {
    try {
      for (let next = await events.next(); next.done !== true; next = await events.next()) capture.apply(next.value, options.now());
    } catch {
      // An aborted engine may throw; what was captured so far is what gets recorded.
    }
    await options.finish('aborted', 'client disconnected').catch((error: unknown) => {
      options.logger.error('could not record an aborted turn', { error: String(error) });
    });
  }

  for (;;) {
    let next: IteratorResult<GenerateEvent>;
    try {
      next = await events.next();
    } catch (error) {
      if (abort.signal.aborted) return recordDisconnect();
      await sink(await recordFailure(error));
      return;
    }
    if (abort.signal.aborted) {
      if (next.done !== true) capture.apply(next.value, options.now());
      return recordDisconnect();
    }
    if (next.done === true) {
      await sink(await recordFailure(new ClawrlError('upstream_error', 'The inference engine stopped without ending the generation.')));
      return;
    }
    let text: string;
    try {
      text = await textOf(next.value);
    } catch (error) {
      // The turn could not be recorded: end without `[DONE]`, so the client cannot take it as durable.
      if (next.value.type === 'end') return options.logger.error('could not record a completed turn', { error: String(error) });
      await sink(await recordFailure(error));
      return;
    }
    if (text !== '') await sink(text);
    if (next.value.type === 'end') return;
  }
}
