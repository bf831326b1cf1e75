/**
 * `InferenceEngine` over an OpenAI-compatible upstream, in three flavors:
 *
 * - `vllm`: streams `/v1/chat/completions` with `return_token_ids` and `logprobs`. vLLM renders
 *   the chat template itself and reports the prompt ids it saw (`prompt_token_ids`) and every
 *   sampled id (`token_ids`), so those ids are recorded as they are: nothing is re-tokenized.
 *   Scoring uses `/v1/completions` with `prompt_logprobs` (and `/tokenize` for message prompts).
 * - `sglang`: SGLang's chat route reports no ids, so the prompt is rendered here with the
 *   model's `ChatRenderer` and sent as `input_ids` to the native `/generate`; text and tool
 *   calls come from decoding the returned ids. `n > 1` is sent as n parallel requests (seed + i
 *   when a seed is set, as `sampling_seed`), one stream per choice. `tool_choice` is not enforced on `/generate`.
 *   Scoring uses `/generate` with `max_new_tokens: 0` and `logprob_start_len`.
 * - `openai`: plain pass-through (OpenAI, Ollama): text and tool calls stream through, results
 *   are never trainable, scoring is unsupported.
 *
 * Policy versions map to LoRA adapter names, or on SGLang to full weights (see policy-registry.ts).
 */
import type { ChatRenderer } from '../../spec/chat-renderer.js';
import type { Logger } from '../../spec/logger.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type {
  EngineCapabilities,
  EngineHealth,
  GenerateEvent,
  GenerateRequest,
  InferenceEngine,
  PolicyArtifact,
  PolicyArtifactSource,
  PolicyVersion,
  ScoreRequest,
  ScoreResult,
} from '../../spec/inference-engine.js';
import { parseChatChunk, toWireChatRequest, toWireTokenizeRequest, wireChatRequestParts, type ChatFlavor } from './chat-completions-api.js';
import { ChatStreamTranslator } from './chat-stream-translator.js';
import { driveGeneration, type UpstreamEvent } from './generation-driver.js';
import { mergeAsyncIterables } from './merge-async-iterables.js';
import { PolicyRegistry } from './policy-registry.js';
import {
  parseGenerateChunk,
  parseGenerateOutput,
  toWireGenerateRequest,
  toWireSamplingSeedProbe,
  toWireScoreRequest as toWireSglangScoreRequest,
  unknownSamplingSeedPattern,
} from './sglang-api.js';
import { SglangChoiceTranslator } from './sglang-stream-translator.js';
import { createJsonStringMemo } from './json-string-memo.js';
import { createPromptIdsParser, type PromptIdsParser } from './prompt-ids-parser.js';
import { checkUpstreamHealth } from './check-upstream-health.js';
import { createUpstreamClient, JsonBody, UpstreamHttpError, type UpstreamClient } from './upstream-client.js';
import { parseScoreResponse, parseTokenizeResponse, toWireScoreRequest as toWireVllmScoreRequest } from './vllm-api.js';

export interface OpenAICompatibleEngineOptions {
  /** Server root, e.g. `http://127.0.0.1:8000`. */
  baseUrl: string;
  /** The upstream's base model name. */
  model: string;
  /** The name clawrl serves the model under; defaults to `model`. */
  servedModelId?: string;
  flavor: ChatFlavor;
  apiKey?: string;
  /**
   * SGLang's `--admin-api-key`, for `/load_lora_adapter`, `/unload_lora_adapter` and
   * `/update_weights_from_disk`: with both keys set SGLang takes only the admin key there; default `apiKey`.
   */
  adminApiKey?: string;
  /** Longest wait for the first byte and between stream chunks. */
  timeoutMs: number;
  /** Required for `sglang`: renders prompts and decodes ids. */
  renderer?: ChatRenderer;
  /** A directory the upstream server also reads, at the same path; enables `loadPolicy`. */
  adapterDirectory?: string;
  /** The base model's folder on disk: full-weight versions on SGLang copy its config and tokenizer files. */
  modelDirectory?: string;
  /**
   * Adapter versions loaded on the server at once (`--upstream-max-loras`; default 4, at least 2):
   * a version a request names is loaded on demand, the least recently used idle one unloaded.
   */
  maxLoadedAdapters?: number;
  contextLength?: number;
  /** Where the engine says what it works around (an SGLang without `sampling_seed`). */
  logger?: Logger;
}

async function* chatEvents(stream: AsyncIterable<string>, promptIds: PromptIdsParser): AsyncGenerator<UpstreamEvent> {
  const translator = new ChatStreamTranslator();
  for await (const data of stream) yield* translator.push(parseChatChunk(data, promptIds));
}

async function* sglangChoiceEvents(
  stream: AsyncIterable<string>,
  translator: SglangChoiceTranslator,
  promptTokenIds: number[],
  versionOfWeights: (weightVersion: string | null) => PolicyVersion | null,
): AsyncGenerator<UpstreamEvent> {
  let first = true;
  for await (const data of stream) {
    const output = parseGenerateChunk(data);
    if (first) {
      const policyVersion = versionOfWeights(output.weightVersion);
      yield { type: 'prompt', promptTokenIds, ...(policyVersion === null ? {} : { policyVersion }) };
    }
    first = false;
    yield* translator.push(output);
  }
}

class OpenAICompatibleEngine implements InferenceEngine {
  readonly engineId: string;
  readonly modelId: string;
  readonly capabilities: EngineCapabilities;
  readonly contextLength: number | undefined;
  private readonly client: UpstreamClient;
  /** The client of the admin routes: `client` unless an admin key is set apart. */
  private readonly adminClient: UpstreamClient;
  private readonly policies: PolicyRegistry;
  private readonly closing = new AbortController();
  /** Agents resend the same long system prompt with every request: escape it once. */
  // Without it the gateway's CPU per agent-shaped streaming turn was 8% higher (bench gateway, 2026-12-06).
  private readonly jsonStrings = createJsonStringMemo();
  /** Each turn's prompt ids extend the previous turn's: parse only what is new. */
  // Without it the gateway's CPU per agent-shaped turn was 8-10% higher (bench gateway, 2026-12-06).
  private readonly promptIds = createPromptIdsParser();
  /** SGLang: whether it takes `sampling_seed`, asked once, when the first seeded request comes. */
  private samplingSeed: Promise<boolean> | null = null;

  constructor(private readonly options: OpenAICompatibleEngineOptions) {
    if (options.flavor === 'sglang' && options.renderer === undefined) {
      throw new ClawrlError('configuration_error', 'the sglang engine needs the model\'s chat renderer to send token ids to /generate');
    }
    this.engineId = options.flavor;
    this.modelId = options.servedModelId ?? options.model;
    this.contextLength = options.contextLength;
    this.client = createUpstreamClient({
      baseUrl: options.baseUrl,
      timeoutMs: options.timeoutMs,
      name: options.flavor,
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    });
    const adminApiKey = options.adminApiKey ?? options.apiKey;
    this.adminClient =
      adminApiKey === options.apiKey
        ? this.client
        : createUpstreamClient({ baseUrl: options.baseUrl, timeoutMs: options.timeoutMs, name: options.flavor, ...(adminApiKey === undefined ? {} : { apiKey: adminApiKey }) });
    this.policies = new PolicyRegistry({
      flavor: options.flavor,
      model: options.model,
      client: this.client,
      adminClient: this.adminClient,
      ...(options.adapterDirectory === undefined ? {} : { adapterDirectory: options.adapterDirectory }),
      ...(options.modelDirectory === undefined ? {} : { modelDirectory: options.modelDirectory }),
      ...(options.maxLoadedAdapters === undefined ? {} : { maxLoadedAdapters: options.maxLoadedAdapters }),
    });
    const exact = options.flavor !== 'openai';
    // vLLM enforces tool_choice and response_format on chat completions (guided decoding), an OpenAI-compatible
    // server decides for itself; SGLang's /generate, which clawrl sends token ids to, enforces neither.
    const constrained = options.flavor !== 'sglang';
    this.capabilities = { tokenIds: exact, scoring: exact, temperatureScoring: false, policyLoading: this.policies.canLoad, forcedToolChoice: constrained, responseFormats: constrained ? ['json_object', 'json_schema'] : [] };
  }

  async *generate(request: GenerateRequest, signal: AbortSignal): AsyncGenerator<GenerateEvent> {
    if (this.closing.signal.aborted) throw new ClawrlError('internal_error', 'the engine is closed');
    const combined = AbortSignal.any([signal, this.closing.signal]);
    const policy = await this.policies.acquire(request.policyVersion, combined);
    try {
      const source = this.options.flavor === 'sglang' ? this.sglangEvents(request, policy.adapterName, combined) : this.chatEvents(request, policy.adapterName, combined);
      yield* driveGeneration(source, { choiceCount: request.sampling.n, policyVersion: policy.version, signal: combined });
    } finally {
      policy.release();
    }
  }

  private chatEvents(request: GenerateRequest, adapterName: string | null, signal: AbortSignal): AsyncIterable<UpstreamEvent> {
    const body = toWireChatRequest({ ...request, model: adapterName ?? this.options.model }, this.options.flavor);
    const parts = wireChatRequestParts(body, this.jsonStrings);
    return chatEvents(this.client.stream('/v1/chat/completions', new JsonBody(parts), signal), this.promptIds);
  }

  private async *sglangEvents(request: GenerateRequest, adapterName: string | null, signal: AbortSignal): AsyncGenerator<UpstreamEvent> {
    const renderer = this.requireRenderer();
    const promptTokenIds = renderer.renderPrompt(request.messages, request.tools);
    // One controller for every parallel choice, so one failing choice cancels the others.
    const choices = new AbortController();
    const onAbort = (): void => choices.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const sendSeed = request.sampling.seed !== undefined && (await this.takesSamplingSeed());
      const sources = Array.from({ length: request.sampling.n }, (_, choiceIndex) => {
        const sampling = request.sampling.seed === undefined ? request.sampling : { ...request.sampling, seed: request.sampling.seed + choiceIndex };
        const body = toWireGenerateRequest({ promptTokenIds, sampling, stopTokenIds: renderer.stopTokenIds, adapterName, sendSeed });
        const translator = new SglangChoiceTranslator(renderer, choiceIndex, request.sampling.stop);
        return sglangChoiceEvents(this.client.stream('/generate', body, choices.signal), translator, promptTokenIds, (weightVersion) =>
          this.policies.versionOfWeights(weightVersion),
        );
      });
      const [only] = sources;
      yield* sources.length === 1 && only !== undefined ? only : mergeAsyncIterables(sources);
    } finally {
      signal.removeEventListener('abort', onAbort);
      choices.abort();
    }
  }

  /**
   * SGLang builds `SamplingParams(**sampling_params)`, so a version from before `sampling_seed` fails
   * every seeded request. Such a server samples them unseeded instead (said once): a seed only makes
   * sampling repeatable, the votes and replies are drawn the same way. A server that cannot be asked
   * now is sent the seed and asked again next time.
   */
  private takesSamplingSeed(): Promise<boolean> {
    this.samplingSeed ??= this.client.postJson('/generate', toWireSamplingSeedProbe()).then(
      () => true,
      (error: unknown) => {
        const cause = ClawrlError.isInstance(error) ? error.cause : undefined;
        if (cause instanceof UpstreamHttpError && cause.status === 400 && unknownSamplingSeedPattern.test(cause.upstreamMessage)) {
          this.options.logger?.warn('this sglang has no sampling_seed (it predates seeded sampling): seeded requests, such as the policy judge\'s votes, are sampled unseeded; upgrade sglang for repeatable sampling', {
            upstream: this.options.baseUrl,
          });
          return false;
        }
        this.samplingSeed = null;
        return true;
      },
    );
    return this.samplingSeed;
  }

  private requireRenderer(): ChatRenderer {
    const { renderer } = this.options;
    if (renderer === undefined) throw new ClawrlError('configuration_error', 'no chat renderer configured');
    return renderer;
  }

  async score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult> {
    if (this.options.flavor === 'openai') throw new ClawrlError('unsupported', 'plain OpenAI-compatible servers cannot score token sequences');
    const policy = await this.policies.acquire(request.policyVersion, AbortSignal.any(signal === undefined ? [this.closing.signal] : [signal, this.closing.signal]));
    try {
      const promptTokenIds = await this.scorePromptIds(request, policy.adapterName, signal);
      if (promptTokenIds.length === 0) throw new ClawrlError('invalid_request', 'cannot score after an empty prompt', { param: 'prompt' });
      const topK = request.topK ?? 0;
      const withTop = (logprobs: number[], top: ScoreResult['top']): ScoreResult => ({ promptTokenIds, logprobs, ...(request.topK === undefined ? {} : { top }) });
      if (request.responseTokenIds.length === 0) return withTop([], []);
      const full = [...promptTokenIds, ...request.responseTokenIds];
      if (this.options.flavor === 'vllm') {
        const body = toWireVllmScoreRequest(adapterModel(policy.adapterName, this.options.model), full, topK);
        const positions = parseScoreResponse(await this.client.postJson('/v1/completions', body, signal), full, promptTokenIds.length, topK);
        return withTop(positions.map((position) => position.logprob), positions.map((position) => position.top));
      }
      return await this.scoreWithSglang(promptTokenIds, request.responseTokenIds, topK, policy.adapterName, signal, withTop);
    } finally {
      policy.release();
    }
  }

  private async scorePromptIds(request: ScoreRequest, adapterName: string | null, signal: AbortSignal | undefined): Promise<number[]> {
    if ('tokenIds' in request.prompt) return request.prompt.tokenIds;
    const tools = request.prompt.tools ?? [];
    if (this.options.flavor === 'sglang') return this.requireRenderer().renderPrompt(request.prompt.messages, tools);
    const body = toWireTokenizeRequest(adapterModel(adapterName, this.options.model), request.prompt.messages, tools);
    return parseTokenizeResponse(await this.client.postJson('/tokenize', body, signal));
  }

  private async scoreWithSglang(
    promptTokenIds: number[],
    responseTokenIds: number[],
    topK: number,
    adapterName: string | null,
    signal: AbortSignal | undefined,
    withTop: (logprobs: number[], top: ScoreResult['top']) => ScoreResult,
  ): Promise<ScoreResult> {
    const renderer = this.requireRenderer();
    // Start one position early: whether SGLang nulls the first entry or not, the last
    // `responseTokenIds.length` entries are then exactly the response positions.
    const body = toWireSglangScoreRequest({ tokenIds: [...promptTokenIds, ...responseTokenIds], logprobStart: promptTokenIds.length - 1, topK, adapterName });
    const output = parseGenerateOutput(await this.client.postJson('/generate', body, signal));
    const count = responseTokenIds.length;
    const entries = output.inputLogprobs.slice(-count);
    const tops = output.inputTop.slice(-count);
    const matches = entries.length === count && entries.every((entry, position) => entry.id === responseTokenIds[position] && Number.isFinite(entry.logprob));
    if (!matches) throw new ClawrlError('upstream_error', 'sglang returned input log-probs that do not line up with the scored tokens');
    return withTop(
      entries.map((entry) => entry.logprob),
      tops.map((alternatives) => alternatives.map((entry) => ({ id: entry.id, text: renderer.tokenText(entry.id), logprob: entry.logprob }))),
    );
  }

  async loadPolicy(artifact: PolicyArtifact): Promise<void> {
    await this.policies.load(artifact);
  }

  async stagePolicy(artifact: PolicyArtifact): Promise<void> {
    await this.policies.stage(artifact);
  }

  setPolicyArtifactSource(source: PolicyArtifactSource): void {
    this.policies.setSource(source);
  }

  async pinPolicy(version: PolicyVersion): Promise<void> {
    await this.policies.pin(version);
  }

  async unpinPolicy(version: PolicyVersion): Promise<void> {
    this.policies.unpin(version);
  }

  async checkHealth(signal: AbortSignal): Promise<EngineHealth> {
    if (this.closing.signal.aborted) return { ok: false, reason: `the ${this.engineId} engine is closed` };
    return checkUpstreamHealth({ baseUrl: this.options.baseUrl, name: this.engineId, signal, ...(this.options.apiKey === undefined ? {} : { apiKey: this.options.apiKey }) });
  }

  async close(): Promise<void> {
    this.closing.abort();
    this.client.close();
    if (this.adminClient !== this.client) this.adminClient.close();
  }
}

function adapterModel(adapterName: string | null, model: string): string {
  return adapterName ?? model;
}

export function createOpenAICompatibleEngine(options: OpenAICompatibleEngineOptions): InferenceEngine {
  return new OpenAICompatibleEngine(options);
}
