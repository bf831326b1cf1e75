/**
 * Translates one SGLang `/generate` stream (one choice) into upstream events. SGLang streams
 * token ids, not clawrl's text: the renderer's stream decoder turns ids into text, stop strings
 * are cut here (the ids still spell them), and the renderer's output parser splits text from
 * tool calls. Ids in `stopTokenIds` end the turn and are never decoded.
 *
 * SGLang sends cumulative `output_ids` and log-probs per chunk by default and only the new ones
 * with `--incremental-streaming-output`; the cumulative `completion_tokens` tells them apart.
 */
import type { AssistantOutputDelta, AssistantOutputParser, ChatRenderer, StreamDecoder } from '../../spec/chat-renderer.js';
import type { FinishReason, SampledToken } from '../../spec/inference-engine.js';
import type { UpstreamEvent } from './generation-driver.js';
import type { GenerateOutput, LogprobTriple } from './sglang-api.js';
import { StopSequenceFilter } from '../../core/stop-sequence-filter.js';

function newItems<T>(items: T[], alreadySeen: number, cumulativeCount: number | null): T[] {
  const cumulative = cumulativeCount === null ? items.length > alreadySeen : items.length === cumulativeCount;
  return cumulative ? items.slice(alreadySeen) : items;
}

export class SglangChoiceTranslator {
  private readonly decoder: StreamDecoder;
  private readonly parser: AssistantOutputParser;
  private readonly stopFilter: StopSequenceFilter;
  private readonly stopTokenIds: Set<number>;
  private receivedIds = 0;
  private receivedLogprobs = 0;
  private receivedTop = 0;
  private toolCalls = 0;
  private finished = false;

  constructor(
    private readonly renderer: ChatRenderer,
    private readonly choiceIndex: number,
    stops: readonly string[],
  ) {
    this.decoder = renderer.createStreamDecoder();
    this.parser = renderer.createOutputParser();
    this.stopFilter = new StopSequenceFilter(stops);
    this.stopTokenIds = new Set(renderer.stopTokenIds);
  }

  push(output: GenerateOutput): UpstreamEvent[] {
    if (this.finished) return [];
    const events: UpstreamEvent[] = [];
    const ids = newItems(output.outputIds, this.receivedIds, output.completionTokens);
    const logprobs = newItems(output.outputLogprobs, this.receivedLogprobs, output.completionTokens);
    const top = newItems(output.outputTop, this.receivedTop, output.completionTokens);
    this.receivedIds += ids.length;
    this.receivedLogprobs += logprobs.length;
    this.receivedTop += top.length;

    let text = '';
    for (const id of ids) if (!this.stopTokenIds.has(id)) text += this.decoder.push(id);
    this.emitText(this.stopFilter.push(text), events);

    if (ids.length > 0) {
      const mismatched = logprobs.length !== ids.length || logprobs.some((entry, position) => entry.id !== ids[position]);
      if (mismatched) events.push({ type: 'inexact', choiceIndex: this.choiceIndex });
      const tokens: SampledToken[] = ids.map((id, position) => ({
        id,
        text: this.renderer.tokenText(id),
        logprob: mismatched ? Number.NaN : (logprobs[position]?.logprob ?? Number.NaN),
        top: (top[position] ?? []).map((entry: LogprobTriple) => ({ id: entry.id, text: this.renderer.tokenText(entry.id), logprob: entry.logprob })),
      }));
      events.push({ type: 'tokens', choiceIndex: this.choiceIndex, tokens });
    }

    if (output.finishType !== null) {
      this.finished = true;
      this.emitText(this.stopFilter.push(this.decoder.finish()) + this.stopFilter.finish(), events);
      this.emitDeltas(this.parser.finish(), events);
      events.push({ type: 'choice-end', choiceIndex: this.choiceIndex, finishReason: this.finishReason(output.finishType) });
    }
    return events;
  }

  private finishReason(type: string): FinishReason {
    if (type === 'length') return 'length';
    if (type === 'abort') return 'aborted';
    return this.toolCalls > 0 ? 'tool_calls' : 'stop';
  }

  private emitText(text: string, events: UpstreamEvent[]): void {
    if (text !== '') this.emitDeltas(this.parser.push(text), events);
  }

  private emitDeltas(deltas: AssistantOutputDelta[], events: UpstreamEvent[]): void {
    const choiceIndex = this.choiceIndex;
    for (const delta of deltas) {
      if (delta.type === 'text') {
        if (delta.text !== '') events.push({ type: 'text-delta', choiceIndex, text: delta.text });
      } else if (delta.type === 'tool-call-start') {
        this.toolCalls = Math.max(this.toolCalls, delta.index + 1);
        events.push({ type: 'tool-call-delta', choiceIndex, toolCallIndex: delta.index, id: delta.id, name: delta.name, argumentsDelta: '' });
      } else if (delta.text !== '') {
        events.push({ type: 'tool-call-delta', choiceIndex, toolCallIndex: delta.index, argumentsDelta: delta.text });
      }
    }
  }
}
