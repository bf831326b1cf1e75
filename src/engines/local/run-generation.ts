/**
 * One generation inside the sampler worker: render the prompt with the chat template, sample the
 * n choices batched with the KV cache, and turn sampled ids into text, tool calls and token events
 * as they are produced. Stop sequences are applied on text; the ids recorded are exactly those
 * sampled up to the stop.
 */
import { StopSequenceFilter } from '../../core/stop-sequence-filter.js';
import { fitWithinWindow, fittedReplyRoom } from '../../model/fit-prompt.js';
import { constrainedPartsOf, createOutputConstraint, type OutputConstraint } from '../../model/output-constraint.js';
import type { LoraAdapter } from '../../model/lora-adapter.js';
import type { Transformer } from '../../model/transformer.js';
import type { AssistantOutputDelta, AssistantOutputParser, ChatRenderer, StreamDecoder } from '../../spec/chat-renderer.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ToolCall } from '../../spec/chat.js';
import type { ChoiceResult, FinishReason, GenerateEvent, GenerateRequest, PolicyVersion } from '../../spec/inference-engine.js';

interface ChoiceState {
  decoder: StreamDecoder;
  stopFilter: StopSequenceFilter;
  parser: AssistantOutputParser;
  content: string;
  toolCalls: ToolCall[];
}

export interface RunGenerationOptions {
  transformer: Pick<Transformer, 'shape' | 'sample'>;
  /** The LoRA adapter the request samples with (null: none); absent: the transformer's own. */
  adapter?: LoraAdapter | null;
  renderer: ChatRenderer;
  policyVersion: PolicyVersion;
  request: GenerateRequest;
  abortFlag: Int32Array;
  /** Fit a prompt longer than the window instead of refusing it. */
  fitPrompts: boolean;
  emit: (event: GenerateEvent) => void;
}

function applyDeltas(choiceIndex: number, state: ChoiceState, deltas: AssistantOutputDelta[], emit: RunGenerationOptions['emit']): void {
  for (const delta of deltas) {
    if (delta.type === 'text') {
      if (delta.text === '') continue;
      state.content += delta.text;
      emit({ type: 'text-delta', choiceIndex, text: delta.text });
    } else if (delta.type === 'tool-call-start') {
      state.toolCalls[delta.index] = { id: delta.id, name: delta.name, arguments: '' };
      emit({ type: 'tool-call-delta', choiceIndex, toolCallIndex: delta.index, id: delta.id, name: delta.name, argumentsDelta: '' });
    } else {
      const call = state.toolCalls[delta.index];
      if (call !== undefined) call.arguments += delta.text;
      emit({ type: 'tool-call-delta', choiceIndex, toolCallIndex: delta.index, argumentsDelta: delta.text });
    }
  }
}

/** Every token's text, once per renderer: constrained decoding tests each against the reply so far. */
const tokenTextsOf = new WeakMap<ChatRenderer, string[]>();

function tokenTexts(renderer: ChatRenderer): string[] {
  let texts = tokenTextsOf.get(renderer);
  if (texts === undefined) {
    const stops = new Set(renderer.stopTokenIds);
    texts = Array.from({ length: renderer.vocabularySize }, (_, tokenId) => (stops.has(tokenId) ? '' : renderer.tokenText(tokenId)));
    tokenTextsOf.set(renderer, texts);
  }
  return texts;
}

export async function runGeneration(options: RunGenerationOptions): Promise<void> {
  const { transformer, renderer, request, emit } = options;
  const { sampling } = request;
  const contextLength = transformer.shape.maxPositionEmbeddings;
  const tools = request.toolChoice === 'none' ? [] : request.tools;
  const { tokenIds: promptTokenIds, wholeTokens } = options.fitPrompts
    ? fitWithinWindow(renderer, request.messages, tools, contextLength, fittedReplyRoom(contextLength))
    : { tokenIds: renderer.renderPrompt(request.messages, tools), wholeTokens: null };
  const room = contextLength - promptTokenIds.length;
  if (room < 1) {
    throw new ClawrlError(
      'context_length_exceeded',
      `This model's maximum context length is ${contextLength} tokens, but the messages take ${promptTokenIds.length} tokens.`,
      { param: 'messages' },
    );
  }
  const maxTokens = Math.min(sampling.maxTokens ?? room, room);
  const fitted = wholeTokens !== null && wholeTokens !== promptTokenIds.length;
  emit({ type: 'start', promptTokenIds, policyVersion: options.policyVersion, ...(fitted ? { promptFit: { originalTokens: wholeTokens, fittedTokens: promptTokenIds.length } } : {}) });

  const states: ChoiceState[] = Array.from({ length: sampling.n }, () => ({
    decoder: renderer.createStreamDecoder(),
    stopFilter: new StopSequenceFilter(sampling.stop),
    parser: renderer.createOutputParser(),
    content: '',
    toolCalls: [],
  }));
  const stopTokenIds = new Set(renderer.stopTokenIds);
  const parts = constrainedPartsOf(request);
  const constraints: OutputConstraint[] | null =
    parts === null ? null : states.map(() => createOutputConstraint(parts, tokenTexts(renderer), renderer.stopTokenIds));
  const abort = new AbortController();
  const result = await transformer.sample({
    promptTokenIds,
    n: sampling.n,
    maxTokens,
    temperature: sampling.temperature,
    topP: sampling.topP,
    topK: sampling.topK ?? 0,
    topLogprobs: sampling.topLogprobs,
    ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
    stopTokenIds: [...stopTokenIds],
    signal: abort.signal,
    ...(options.adapter === undefined ? {} : { adapter: options.adapter }),
    ...(constraints === null ? {} : { allowedTokens: (sequenceIndex: number) => constraints[sequenceIndex]?.allowedTokens() ?? null }),
    onToken: (event) => {
      constraints?.[event.sequenceIndex]?.advance(event.tokenId);
      if (Atomics.load(options.abortFlag, 0) !== 0) abort.abort();
      const choiceIndex = event.sequenceIndex;
      const state = states[choiceIndex];
      if (state === undefined) return undefined;
      emit({
        type: 'tokens',
        choiceIndex,
        tokens: [
          {
            id: event.tokenId,
            text: renderer.tokenText(event.tokenId),
            logprob: event.logprob,
            top: event.top.map((entry) => ({ id: entry.tokenId, text: renderer.tokenText(entry.tokenId), logprob: entry.logprob })),
          },
        ],
      });
      if (stopTokenIds.has(event.tokenId)) return undefined;
      const text = state.stopFilter.push(state.decoder.push(event.tokenId));
      applyDeltas(choiceIndex, state, state.parser.push(text), emit);
      return state.stopFilter.hasStopped ? 'stop' : undefined;
    },
  });

  const choices: ChoiceResult[] = result.sequences.map((sequence, choiceIndex) => {
    const state = states[choiceIndex]!;
    const tail = state.stopFilter.push(state.decoder.finish()) + state.stopFilter.finish();
    applyDeltas(choiceIndex, state, [...state.parser.push(tail), ...state.parser.finish()], emit);
    let finishReason: FinishReason = sequence.finishReason;
    if (finishReason === 'stop' && state.toolCalls.length > 0) finishReason = 'tool_calls';
    emit({ type: 'choice-end', choiceIndex, finishReason });
    return {
      index: choiceIndex,
      message: { role: 'assistant', content: state.content, ...(state.toolCalls.length > 0 ? { toolCalls: state.toolCalls } : {}) },
      toolCalls: state.toolCalls,
      responseTokenIds: sequence.tokenIds,
      logprobs: sequence.logprobs,
      finishReason,
    };
  });
  emit({
    type: 'end',
    result: {
      promptTokenIds,
      choices,
      policyVersion: options.policyVersion,
      trainable: true,
      usage: { promptTokens: promptTokenIds.length, completionTokens: choices.reduce((sum, choice) => sum + choice.responseTokenIds.length, 0) },
    },
  });
}
