/**
 * Turns an adapter's upstream events into the seam's event stream: exactly one `start` first
 * (emitted when the upstream first answers, so an upstream that fails outright throws before
 * anything was sent), every choice ended, exactly one `end` last. An abort ends unfinished
 * choices with `aborted`; a stream that stops early without an abort is an upstream error.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { GenerateEvent, PolicyVersion } from '../../spec/inference-engine.js';
import { GenerationAccumulator } from './generation-accumulator.js';

export type UpstreamEvent =
  | Exclude<GenerateEvent, { type: 'start' } | { type: 'end' }>
  /**
   * The upstream answered; carries the prompt ids it reported (empty when none) and, when the
   * upstream says which weights answered (SGLang's `weight_version`), that policy version.
   */
  | { type: 'prompt'; promptTokenIds: number[]; policyVersion?: PolicyVersion }
  | { type: 'usage'; promptTokens: number; completionTokens: number }
  /** A choice's ids and log-probs cannot be paired exactly. */
  | { type: 'inexact'; choiceIndex: number };

export interface DriveOptions {
  choiceCount: number;
  policyVersion: PolicyVersion;
  signal: AbortSignal;
}

export async function* driveGeneration(source: AsyncIterable<UpstreamEvent>, options: DriveOptions): AsyncGenerator<GenerateEvent> {
  const accumulator = new GenerationAccumulator(options.choiceCount);
  let promptTokenIds: number[] | null = null;
  let policyVersion = options.policyVersion;
  let usage: { promptTokens: number; completionTokens: number } | null = null;
  const start = (): GenerateEvent => ({ type: 'start', promptTokenIds: promptTokenIds ?? [], policyVersion });
  let started = false;

  for await (const event of source) {
    if (event.type === 'prompt') {
      if (promptTokenIds === null && event.policyVersion !== undefined) policyVersion = event.policyVersion;
      promptTokenIds ??= event.promptTokenIds;
    } else if (!started) {
      // Only the prompt event may come first; anything else means the upstream skipped it.
      promptTokenIds ??= [];
    }
    if (!started) {
      started = true;
      yield start();
    }
    switch (event.type) {
      case 'prompt':
        continue;
      case 'usage':
        usage = { promptTokens: event.promptTokens, completionTokens: event.completionTokens };
        continue;
      case 'inexact':
        if (accumulator.hasChoice(event.choiceIndex)) accumulator.markInexact(event.choiceIndex);
        continue;
      default:
        if (!accumulator.hasChoice(event.choiceIndex)) {
          throw new ClawrlError('upstream_error', `upstream sent choice ${event.choiceIndex} but ${options.choiceCount} were asked for`);
        }
        accumulator.apply(event);
        yield event;
    }
  }

  if (!started) yield start();
  for (const choiceIndex of accumulator.unfinishedChoices()) {
    if (!options.signal.aborted) {
      throw new ClawrlError('upstream_error', `upstream stream ended before choice ${choiceIndex} finished`, { retryable: true });
    }
    const event: GenerateEvent = { type: 'choice-end', choiceIndex, finishReason: 'aborted' };
    accumulator.apply(event);
    yield event;
  }
  yield { type: 'end', result: accumulator.result({ promptTokenIds: promptTokenIds ?? [], policyVersion, usage }) };
}
