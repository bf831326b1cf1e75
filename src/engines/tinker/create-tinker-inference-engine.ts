/**
 * An `InferenceEngine` on Tinker's sampling API (`engines.md` §5.5): prompts are rendered here with
 * the model's own chat template (a local tokenizer folder), sampled with `asample` on exact token
 * ids, and the service's sampled ids and log-probs are what the turn records — nothing is
 * re-tokenized. Scoring (the OPD teacher) is one `asample` of the whole sequence with
 * `max_tokens: 1` and `prompt_logprobs`, read from the prompt's length on (openclaw-tinker's
 * trick, §5.5). A published version is a sampling session of its sampler path
 * (`tinker-checkpoint.json`, see the training engine); version 0 samples the base model.
 *
 * `asample` answers once with whole sequences, so a reply streams as one piece. Stop strings are
 * cut here: the service is sent only the template's stop token ids, and a sequence is cut after
 * the token that completes a stop string, as the local engine does. Log-probs are the service's;
 * Tinker's prompt log-probs are at temperature 1, so `score` ignores a requested temperature
 * (`temperatureScoring: false`, as the other remote engines).
 */
import { StopSequenceFilter } from '../../core/stop-sequence-filter.js';
import type { AssistantOutputDelta, ChatRenderer } from '../../spec/chat-renderer.js';
import type { ToolCall } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ChoiceResult, FinishReason, GenerateEvent, GenerateRequest, InferenceEngine, PolicyArtifact, PolicyVersion, ScoreRequest, ScoreResult } from '../../spec/inference-engine.js';
import type { TinkerClient } from './create-tinker-client.js';
import { tinkerCheckpointFileName, tinkerCheckpointFileSchema } from './create-tinker-training-engine.js';
import { sampleBody, sampleResultSchema, type SampleBodyOptions, type SampleResult } from './tinker-api.js';

export interface TinkerInferenceEngineOptions {
  client: TinkerClient;
  /** The base model as the service names it. */
  baseModel: string;
  /** The name the gateway serves under. */
  servedModelId: string;
  /** The model's tokenizer and chat template (`--model <folder>`). */
  renderer: ChatRenderer;
  /** Default: what the service reports for the base model, else 32768. */
  contextLength?: number;
}

type SampledSequence = SampleResult['sequences'][number];

/** One sequence as events and its choice: stop tokens end it, a stop string cuts it after the token that completes it. */
function choiceOf(renderer: ChatRenderer, index: number, sequence: SampledSequence, stops: readonly string[]): { events: GenerateEvent[]; choice: ChoiceResult } {
  const decoder = renderer.createStreamDecoder();
  const parser = renderer.createOutputParser();
  const filter = new StopSequenceFilter(stops);
  const stopTokens = new Set(renderer.stopTokenIds);
  const deltas: AssistantOutputDelta[] = [];
  const kept: number[] = [];
  let finishReason: FinishReason = sequence.stopReason === 'length' ? 'length' : 'stop';
  for (const id of sequence.tokens) {
    kept.push(id);
    if (stopTokens.has(id)) {
      finishReason = 'stop';
      break;
    }
    deltas.push(...parser.push(filter.push(decoder.push(id))));
    if (filter.hasStopped) {
      finishReason = 'stop';
      break;
    }
  }
  deltas.push(...parser.push(filter.push(decoder.finish()) + filter.finish()), ...parser.finish());
  const logprobs = (sequence.logprobs ?? []).slice(0, kept.length);
  const events: GenerateEvent[] = [{ type: 'tokens', choiceIndex: index, tokens: kept.map((id, position) => ({ id, text: renderer.tokenText(id), logprob: logprobs[position] ?? Number.NaN, top: [] })) }];
  let content = '';
  const toolCalls: ToolCall[] = [];
  for (const delta of deltas) {
    if (delta.type === 'text') {
      if (delta.text === '') continue;
      content += delta.text;
      events.push({ type: 'text-delta', choiceIndex: index, text: delta.text });
    } else if (delta.type === 'tool-call-start') {
      toolCalls[delta.index] = { id: delta.id, name: delta.name, arguments: '' };
      events.push({ type: 'tool-call-delta', choiceIndex: index, toolCallIndex: delta.index, id: delta.id, name: delta.name, argumentsDelta: '' });
    } else if (delta.text !== '') {
      const call = toolCalls[delta.index];
      if (call !== undefined) call.arguments += delta.text;
      events.push({ type: 'tool-call-delta', choiceIndex: index, toolCallIndex: delta.index, argumentsDelta: delta.text });
    }
  }
  if (toolCalls.length > 0 && finishReason === 'stop') finishReason = 'tool_calls';
  events.push({ type: 'choice-end', choiceIndex: index, finishReason });
  return {
    events,
    choice: { index, message: { role: 'assistant', content, ...(toolCalls.length > 0 ? { toolCalls } : {}) }, toolCalls, responseTokenIds: kept, logprobs, finishReason },
  };
}

export async function createTinkerInferenceEngine(options: TinkerInferenceEngineOptions): Promise<InferenceEngine> {
  const { client, renderer } = options;
  const served = (await client.serverCapabilities()).models.find((model) => model.name === options.baseModel);
  const contextLength = options.contextLength ?? served?.contextLength ?? 32_768;
  const sessions = new Map<PolicyVersion, string>([[0, await client.createSamplingSession({ baseModel: options.baseModel })]]);
  let active: PolicyVersion = 0;

  function sessionOf(version: PolicyVersion | undefined): string {
    const session = sessions.get(version ?? active);
    if (session === undefined) throw new ClawrlError('not_found', `policy version ${String(version)} is not loaded on the Tinker engine`, { param: 'policyVersion' });
    return session;
  }

  function sample(session: string, body: Omit<SampleBodyOptions, 'samplingSessionId' | 'seqId'>): Promise<SampleResult> {
    return client.submit(session, 'asample', (seqId) => sampleBody({ ...body, samplingSessionId: session, seqId }), sampleResultSchema);
  }

  return {
    engineId: 'tinker',
    modelId: options.servedModelId,
    capabilities: { tokenIds: true, scoring: true, temperatureScoring: false, policyLoading: true, forcedToolChoice: false, responseFormats: [] },
    contextLength,

    async *generate(request: GenerateRequest, signal: AbortSignal): AsyncIterable<GenerateEvent> {
      const version = request.policyVersion ?? active;
      const session = sessionOf(version);
      const promptTokenIds = renderer.renderPrompt(request.messages, request.tools);
      const { sampling } = request;
      const maxTokens = sampling.maxTokens ?? contextLength - promptTokenIds.length;
      if (maxTokens < 1) throw new ClawrlError('context_length_exceeded', `the prompt has ${promptTokenIds.length} tokens, the model takes ${contextLength}`);
      yield { type: 'start', promptTokenIds, policyVersion: version };
      const pending = sample(session, {
        promptTokenIds, numSamples: sampling.n, maxTokens, temperature: sampling.temperature, topK: sampling.topK ?? 0, topP: sampling.topP,
        seed: sampling.seed ?? null, stopTokenIds: renderer.stopTokenIds, promptLogprobs: false, topkPromptLogprobs: 0,
      });
      pending.catch(() => undefined);
      const aborted = new Promise<null>((resolve) => {
        if (signal.aborted) resolve(null);
        signal.addEventListener('abort', () => resolve(null), { once: true });
      });
      const result = await Promise.race([pending, aborted]);
      const choices: ChoiceResult[] = [];
      const ended = new Set<number>();
      for (const [index, sequence] of (result?.sequences ?? []).entries()) {
        if (signal.aborted) break;
        const { events, choice } = choiceOf(renderer, index, sequence, sampling.stop);
        for (const event of events) {
          if (signal.aborted) break;
          yield event;
          if (event.type === 'choice-end') ended.add(index);
        }
        if (ended.has(index)) choices.push(choice);
      }
      // An abort ends every choice not yet ended, with what it streamed so far (nothing more is sampled).
      for (let index = 0; index < sampling.n; index += 1) {
        if (ended.has(index)) continue;
        yield { type: 'choice-end', choiceIndex: index, finishReason: 'aborted' };
        choices.push({ index, message: { role: 'assistant', content: '' }, toolCalls: [], responseTokenIds: [], logprobs: [], finishReason: 'aborted' });
      }
      choices.sort((left, right) => left.index - right.index);
      const trainable = result !== null && result.sequences.every((sequence) => (sequence.logprobs?.length ?? -1) >= sequence.tokens.length || sequence.tokens.length === 0);
      yield {
        type: 'end',
        result: {
          promptTokenIds, choices, policyVersion: version, trainable,
          usage: { promptTokens: promptTokenIds.length, completionTokens: choices.reduce((total, choice) => total + choice.responseTokenIds.length, 0) },
        },
      };
    },

    async score(request: ScoreRequest): Promise<ScoreResult> {
      const session = sessionOf(request.policyVersion);
      const promptTokenIds = 'tokenIds' in request.prompt ? request.prompt.tokenIds : renderer.renderPrompt(request.prompt.messages, request.prompt.tools ?? []);
      if (promptTokenIds.length === 0) throw new ClawrlError('invalid_request', 'cannot score after an empty prompt', { param: 'prompt' });
      const topK = request.topK ?? 0;
      if (request.responseTokenIds.length === 0) return { promptTokenIds, logprobs: [], ...(request.topK === undefined ? {} : { top: [] }) };
      const full = [...promptTokenIds, ...request.responseTokenIds];
      const result = await sample(session, {
        promptTokenIds: full, numSamples: 1, maxTokens: 1, temperature: 1, topK: 0, topP: 1, seed: null, stopTokenIds: [], promptLogprobs: true, topkPromptLogprobs: topK,
      });
      const logprobs = (result.promptLogprobs ?? []).slice(promptTokenIds.length);
      if (logprobs.length !== request.responseTokenIds.length || logprobs.some((value) => value === null || !Number.isFinite(value))) {
        throw new ClawrlError('upstream_error', 'the Tinker service returned prompt log-probs that do not line up with the scored tokens');
      }
      const top = topK > 0 ? (result.topPromptLogprobs ?? []).slice(promptTokenIds.length).map((entries) => (entries ?? []).map(([id, logprob]) => ({ id, text: renderer.tokenText(id), logprob }))) : [];
      return { promptTokenIds, logprobs: logprobs as number[], ...(request.topK === undefined ? {} : { top }) };
    },

    async loadPolicy(artifact: PolicyArtifact): Promise<void> {
      if (artifact.kind === 'base') {
        active = artifact.version;
        if (!sessions.has(artifact.version)) sessions.set(artifact.version, sessionOf(0));
        return;
      }
      const bytes = artifact.files[tinkerCheckpointFileName];
      const file = bytes === undefined ? null : tinkerCheckpointFileSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
      if (file === null || !file.success) throw new ClawrlError('unsupported', `policy version ${artifact.version} was not trained on Tinker (no ${tinkerCheckpointFileName}): the Tinker engine samples only Tinker checkpoints`);
      if (!sessions.has(artifact.version)) sessions.set(artifact.version, await client.createSamplingSession({ modelPath: file.data.samplerPath }));
      active = artifact.version;
    },

    async close() {
      await client.close();
    },
  };
}
