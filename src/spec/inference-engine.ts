/**
 * The `InferenceEngine` seam: anything that serves the policy model. Implementations: the local
 * worker-thread engine, OpenAI-compatible upstreams (vLLM, SGLang, plain OpenAI APIs).
 *
 * The contract that matters for RL: every token an engine reports is the exact token id it
 * sampled, with the log-prob it sampled it under, and the prompt ids are exactly the ids the
 * model saw. Nothing here re-tokenizes text.
 */
import type { ChatMessage, ResponseFormat, SamplingOptions, ToolCall, ToolChoice, ToolDefinition } from './chat.js';

/** A policy version: 0 is the base model; each training step publishes the next integer. */
export type PolicyVersion = number;

export interface GenerateRequest {
  messages: ChatMessage[];
  tools: ToolDefinition[];
  toolChoice: ToolChoice;
  sampling: SamplingOptions;
  /** Structured output; only sent to an engine with `capabilities.responseFormats`. */
  responseFormat?: ResponseFormat;
  /**
   * Serve with this policy version instead of the active one (pinned sessions). Engines that
   * cannot serve old versions reject with `ClawrlError('unsupported')`.
   */
  policyVersion?: PolicyVersion;
}

export interface TokenLogprob {
  id: number;
  /** The decoded text of this token alone (may be a partial UTF-8 sequence rendered lossy). */
  text: string;
  logprob: number;
}

/** One sampled token with its alternatives. */
export interface SampledToken extends TokenLogprob {
  top: TokenLogprob[];
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'aborted' | 'error';

/** Events of a generation, in order. Choices interleave when `n > 1`. */
export type GenerateEvent =
  | {
      type: 'start';
      /** Exact prompt ids; empty when the engine cannot report them (not trainable). */
      promptTokenIds: number[];
      policyVersion: PolicyVersion;
      /**
       * Set when the engine fitted a prompt longer than its window (`--prompt-overflow fit`):
       * the prompt's tokens as the request rendered it, and as the model saw it.
       */
      promptFit?: { originalTokens: number; fittedTokens: number };
    }
  /** Visible assistant text. */
  | { type: 'text-delta'; choiceIndex: number; text: string }
  /**
   * A streamed piece of a tool call. The first delta of a call carries `id` and `name`;
   * later ones carry argument text. `toolCallIndex` counts calls within the choice.
   */
  | {
      type: 'tool-call-delta';
      choiceIndex: number;
      toolCallIndex: number;
      id?: string;
      name?: string;
      argumentsDelta: string;
    }
  /** Sampled tokens, whether they became visible text, tool-call text or nothing (special tokens). */
  | { type: 'tokens'; choiceIndex: number; tokens: SampledToken[] }
  | { type: 'choice-end'; choiceIndex: number; finishReason: FinishReason }
  | { type: 'end'; result: GenerateResult };

export interface ChoiceResult {
  index: number;
  message: ChatMessage;
  toolCalls: ToolCall[];
  /** Exact sampled ids, in order, including a final end-of-turn token if one was sampled. */
  responseTokenIds: number[];
  /** One log-prob per response token. */
  logprobs: number[];
  finishReason: FinishReason;
}

export interface GenerateResult {
  promptTokenIds: number[];
  choices: ChoiceResult[];
  policyVersion: PolicyVersion;
  /** False when the engine could not report exact token ids and log-probs. */
  trainable: boolean;
  usage: { promptTokens: number; completionTokens: number };
}

export interface ScoreRequest {
  /** Either rendered messages (the engine applies its chat template) or exact prompt ids. */
  prompt: { messages: ChatMessage[]; tools?: ToolDefinition[] } | { tokenIds: number[] };
  /** The continuation to score, as exact token ids. */
  responseTokenIds: number[];
  /** Also return the top-k alternatives at each response position. */
  topK?: number;
  /**
   * Score under `log_softmax(logits / temperature)` (default 1), the distribution the sampler
   * records log-probs under, so scores compare with rollout log-probs of the same temperature.
   */
  temperature?: number;
  policyVersion?: PolicyVersion;
}

export interface ScoreResult {
  promptTokenIds: number[];
  /** log p(response[i] | prompt, response[<i]) for each response token. */
  logprobs: number[];
  /** Present when `topK` was asked for: the k most likely tokens at each position. */
  top?: TokenLogprob[][];
}

/** What an engine can do; the gateway and trainer adapt to it. */
export interface EngineCapabilities {
  /** Reports exact prompt and sampled token ids with log-probs (turns are trainable). */
  tokenIds: boolean;
  /** Implements `score`. */
  scoring: boolean;
  /**
   * `score` honours `temperature`, so a reply sampled at any temperature can be scored against the
   * log-probs it was sampled with. The remote adapters score at 1 (vLLM's prompt log-probs did not
   * apply a request's temperature, at least up to 0.11).
   */
  temperatureScoring: boolean;
  /** Can load published policy versions. */
  policyLoading: boolean;
  /**
   * Enforces a `toolChoice` of `required` or a named tool (the reply is a tool call). The gateway
   * refuses such a request to an engine that cannot, rather than let it answer in text.
   */
  forcedToolChoice: boolean;
  /** The `responseFormat`s it enforces (JSON, JSON of a schema); the gateway refuses the others. */
  responseFormats: readonly ResponseFormat['type'][];
}

/** A published policy version as an engine loads it. */
export interface PolicyArtifact {
  version: PolicyVersion;
  /** `adapter`: a PEFT LoRA folder; `full`: a safetensors file with every weight; `base`: none. */
  kind: 'base' | 'adapter' | 'full';
  /** Files of the artifact by name (`adapter_config.json`, `adapter_model.safetensors`, ...). */
  files: Record<string, Uint8Array>;
}

/**
 * Where an engine that holds a bounded number of policy versions gets one it does not hold (a
 * request names it, or it was evicted): the version's stored artifact, or null when there is no such
 * version. The composition root gives the record store's (`InferenceEngine.setPolicyArtifactSource`).
 */
export type PolicyArtifactSource = (version: PolicyVersion) => Promise<PolicyArtifact | null>;

/** Whether an engine can serve now; an engine that cannot says why, in words for an operator. */
export type EngineHealth = { ok: true } | { ok: false; reason: string };

export interface InferenceEngine {
  /** Stable id of the implementation, e.g. `local`, `vllm`, `sglang`, `openai`. */
  readonly engineId: string;
  /** The model name the gateway serves under. */
  readonly modelId: string;
  readonly capabilities: EngineCapabilities;
  /** Largest prompt plus completion the model accepts, in tokens; undefined if unknown. */
  readonly contextLength: number | undefined;

  /**
   * Generates one or more choices. The stream ends with exactly one `end` event unless it
   * throws. Aborting `signal` stops generation; the stream then ends with `finishReason:
   * 'aborted'` choices or throws an abort error.
   */
  generate(request: GenerateRequest, signal: AbortSignal): AsyncIterable<GenerateEvent>;

  /** Per-token log-probs of a given continuation. Throws `unsupported` without `capabilities.scoring`. */
  score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult>;

  /**
   * Makes `artifact` the version served to new requests. Requests in flight finish on the
   * version they started with. Throws `unsupported` without `capabilities.policyLoading`.
   */
  loadPolicy(artifact: PolicyArtifact): Promise<void>;

  /**
   * Lets the engine load any version a request names (`GenerateRequest.policyVersion`,
   * `ScoreRequest.policyVersion`), not only those `loadPolicy` gave it: the local engine, vLLM and
   * SGLang serve many adapters at once and fetch a cold one on demand. Set once, before requests
   * name versions. Optional: an engine without it serves only the versions it was given.
   */
  setPolicyArtifactSource?(source: PolicyArtifactSource): void;

  /**
   * Keeps `version` loaded (never evicted, loaded now if it is not) until as many `unpinPolicy`
   * calls: for versions that must answer without a cold load. Pins are bounded by the engine's room
   * (the local engine: `--max-resident-adapters` − 2 adapter versions; vLLM and SGLang:
   * `--upstream-max-loras` − 2; the active version is always kept); a pin beyond it is refused with
   * `unsupported`. Optional, like the source above.
   */
  pinPolicy?(version: PolicyVersion): Promise<void>;
  unpinPolicy?(version: PolicyVersion): Promise<void>;

  /**
   * Loads `artifact` so requests that name its version (`policyVersion`) are served by it, while
   * requests that name none keep the served version: how the replay gate samples a candidate and
   * the canary serves it to its cohort alone. On vLLM/SGLang the candidate's adapter is loaded
   * under its own name, which only requests naming the version are sent to. Optional: an engine
   * without it cannot gate versions (`policy serving` says so at start-up).
   */
  stagePolicy?(artifact: PolicyArtifact): Promise<void>;

  /**
   * Whether the engine can serve now: a remote engine asks its server, which may have gone away
   * since start-up. Answers, never throws; `signal` bounds how long it may take. Optional: an
   * engine without it is taken as healthy while it is open.
   */
  checkHealth?(signal: AbortSignal): Promise<EngineHealth>;

  /** Releases workers and connections. Idempotent. */
  close(): Promise<void>;
}
