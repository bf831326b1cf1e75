/**
 * The SSE body of a streamed chat completion. Chunks go out as the engine produces tokens; the
 * turn is recorded when the engine ends, before the final chunks and `[DONE]`, so a client that
 * saw `[DONE]` knows its turn is durable. A client that goes away cancels the stream, which
 * aborts the engine; the partial turn is recorded as aborted.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import type { GenerateEvent, SampledToken } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { TurnStatus } from '../spec/records.js';
import { chunkData, wireFinishReason, wireLogprobs, wireUsage, type ChunkChoice, type CompletionIdentity } from './completion-wire.js';
import { wireErrorOf } from './error-response.js';
import type { TurnCapture } from './turn-capture.js';

export interface CompletionStreamOptions {
  events: AsyncIterator<GenerateEvent>;
  capture: TurnCapture;
  identity: CompletionIdentity;
  includeUsage: boolean;
  /** Alternatives per token when the client asked for log-probs; null when it did not. */
  topLogprobs: number | null;
  abort: AbortController;
  now: () => number;
  /** Records the turn; resolves when it is durable. */
  finish: (status: TurnStatus, error: string | null) => Promise<void>;
  logger: Logger;
}

export function createCompletionStream(options: CompletionStreamOptions): ReadableStream<Uint8Array> {
  const { events, capture, identity, topLogprobs } = options;
  const encoder = new TextEncoder();
  const started = new Set<number>();
  const pendingTokens = new Map<number, SampledToken[]>();
  const finishChunks: ChunkChoice[] = [];
  let finished = false;

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

  /** The chunks one engine event produces. */
  async function chunksOf(event: GenerateEvent): Promise<string[]> {
    capture.apply(event, options.now());
    switch (event.type) {
      case 'start':
        return [];
      case 'text-delta':
        return event.text === '' ? [] : [deltaChunk(event.choiceIndex, { content: event.text })];
      case 'tool-call-delta': {
        const call: Record<string, unknown> = { index: event.toolCallIndex };
        if (event.id !== undefined) Object.assign(call, { id: event.id, type: 'function' });
        call.function = { ...(event.name === undefined ? {} : { name: event.name }), arguments: event.argumentsDelta };
        return [deltaChunk(event.choiceIndex, { tool_calls: [call] })];
      }
      case 'tokens':
        if (topLogprobs !== null) {
          const pending = pendingTokens.get(event.choiceIndex) ?? [];
          pending.push(...event.tokens);
          pendingTokens.set(event.choiceIndex, pending);
        }
        return [];
      case 'choice-end': {
        const leading = started.has(event.choiceIndex) ? [] : [deltaChunk(event.choiceIndex, { content: '' })];
        finishChunks.push({
          index: event.choiceIndex,
          delta: {},
          ...takeLogprobs(event.choiceIndex),
          finish_reason: wireFinishReason(event.finishReason),
        });
        return leading;
      }
      case 'end': {
        finished = true;
        await options.finish('completed', null);
        const tail = finishChunks.map((choice) => chunkData(identity, [choice]));
        if (options.includeUsage) tail.push(chunkData(identity, [], wireUsage(event.result.usage)));
        tail.push('data: [DONE]\n\n');
        return tail;
      }
    }
  }

  async function fail(error: unknown): Promise<string[]> {
    finished = true;
    const aborted = options.abort.signal.aborted;
    const message = error instanceof Error ? error.message : String(error);
    await options.finish(aborted ? 'aborted' : 'failed', message).catch((recordError: unknown) => {
      options.logger.error('could not record a failed turn', { error: String(recordError) });
    });
    const wireError = ClawrlError.isInstance(error)
      ? wireErrorOf(error)
      : wireErrorOf(new ClawrlError('upstream_error', 'The inference engine failed during generation.'));
    return [`data: ${JSON.stringify(wireError)}\n\n`, 'data: [DONE]\n\n'];
  }

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Loop until at least one chunk is ready, so the consumer is never handed an empty pull.
      for (;;) {
        let chunks: string[];
        try {
          const next = await events.next();
          if (next.done === true) {
            chunks = finished ? [] : await fail(new ClawrlError('upstream_error', 'The inference engine stopped without ending the generation.'));
            if (chunks.length === 0) {
              controller.close();
              return;
            }
          } else {
            chunks = await chunksOf(next.value);
          }
        } catch (error) {
          chunks = finished ? [] : await fail(error);
        }
        for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
        if (finished) {
          controller.close();
          return;
        }
        if (chunks.length > 0) return;
      }
    },
    async cancel() {
      if (finished) return;
      finished = true;
      options.abort.abort(new ClawrlError('invalid_request', 'client disconnected'));
      // Drain the engine so it observes the abort and the partial turn is complete.
      try {
        for (let next = await events.next(); next.done !== true; next = await events.next()) {
          options.capture.apply(next.value, options.now());
        }
      } catch {
        // An aborted engine may throw; what was captured so far is what gets recorded.
      }
      await options.finish('aborted', 'client disconnected').catch((error: unknown) => {
        options.logger.error('could not record an aborted turn', { error: String(error) });
      });
    },
  });
}
