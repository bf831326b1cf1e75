/**
 * The body of a streamed turn, whatever its protocol. Events go out as the engine produces them,
 * encoded by the protocol's `TurnStreamEncoder`; the turn is recorded when the engine ends, before
 * the encoder's closing events (`[DONE]`, `response.completed`, `message_stop`), so a client that
 * saw them knows its turn is durable. A client that goes away aborts the engine (through `abort`);
 * the rest of the generation is drained unsent and the partial turn is recorded as aborted.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import type { GenerateEvent, GenerateResult } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { TurnStatus } from '../spec/records.js';
import type { TurnCapture } from './turn-capture.js';

/** Where the SSE text goes; a returned promise means "wait before writing more" (backpressure). */
export type StreamSink = (text: string) => Promise<void> | undefined;

/** A protocol's SSE encoding of a generation; it may keep state between events. */
export interface TurnStreamEncoder {
  /** The opening text, written first: the engine has started (its `start` event is the turn's, already applied). */
  start(): string;
  /** The text one engine event other than `end` produces ('' for none), after the capture has applied it. */
  event(event: Exclude<GenerateEvent, { type: 'end' }>): string;
  /** The closing text, written once the turn is recorded. */
  end(result: GenerateResult): string;
  /** The text that reports a failure mid-stream and ends the stream. */
  failure(error: ClawrlError): string;
}

export interface TurnStreamOptions {
  events: AsyncIterator<GenerateEvent>;
  capture: TurnCapture;
  encoder: TurnStreamEncoder;
  /** Aborted when the client goes away. */
  abort: AbortController;
  now: () => number;
  /** Records the turn; resolves when it is durable. */
  finish: (status: TurnStatus, error: string | null) => Promise<void>;
  logger: Logger;
}

/** Streams the turn into `sink`; resolves once the turn is recorded and the last event written. */
export async function writeTurnStream(options: TurnStreamOptions, sink: StreamSink): Promise<void> {
  const { events, capture, encoder, abort } = options;

  /** The SSE text one engine event produces ('' for none). */
  async function textOf(event: GenerateEvent): Promise<string> {
    capture.apply(event, options.now());
    if (event.type !== 'end') return encoder.event(event);
    await options.finish('completed', null);
    return encoder.end(event.result);
  }

  async function recordFailure(error: unknown): Promise<string> {
    const message = error instanceof Error ? error.message : String(error);
    await options.finish(abort.signal.aborted ? 'aborted' : 'failed', message).catch((recordError: unknown) => {
      options.logger.error('could not record a failed turn', { error: String(recordError) });
    });
    return encoder.failure(
      ClawrlError.isInstance(error) ? error : new ClawrlError('upstream_error', 'The inference engine failed during generation.'),
    );
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

  const opening = encoder.start();
  if (opening !== '') await sink(opening);
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
      // The turn could not be recorded: end without the closing events, so the client cannot take it as durable.
      if (next.value.type === 'end') return options.logger.error('could not record a completed turn', { error: String(error) });
      await sink(await recordFailure(error));
      return;
    }
    if (text !== '') await sink(text);
    if (next.value.type === 'end') return;
  }
}
