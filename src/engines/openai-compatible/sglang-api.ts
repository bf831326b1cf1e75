/**
 * Wire shapes of SGLang's native `POST /generate` (engines.md §2.1) and their conversion.
 * Log-prob entries are `[logprob, token_id, text | null]` triples; the first prompt position
 * has a null log-prob.
 */
import { z } from 'zod';
import { tokenIdsSchema } from './chat-completions-api.js';
import type { SamplingOptions } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface WireGenerateRequest {
  input_ids: number[];
  sampling_params: {
    max_new_tokens?: number;
    temperature: number;
    top_p: number;
    top_k?: number;
    stop?: string[];
    stop_token_ids?: number[];
    /** SGLang's name for the seed; `seed` is not a `SamplingParams` field, and an unknown field fails the request. */
    sampling_seed?: number;
  };
  return_logprob: true;
  logprob_start_len?: number;
  top_logprobs_num?: number;
  stream: boolean;
  lora_path?: string;
}

export function toWireGenerateRequest(input: {
  promptTokenIds: number[];
  sampling: SamplingOptions;
  stopTokenIds: readonly number[];
  adapterName: string | null;
  /** False for an SGLang without `sampling_seed`: the seed is left out. */
  sendSeed: boolean;
}): WireGenerateRequest {
  const { sampling } = input;
  return {
    input_ids: input.promptTokenIds,
    sampling_params: {
      ...(sampling.maxTokens === undefined ? {} : { max_new_tokens: sampling.maxTokens }),
      temperature: sampling.temperature,
      top_p: sampling.topP,
      ...(sampling.topK !== undefined && sampling.topK > 0 ? { top_k: sampling.topK } : {}),
      ...(sampling.stop.length > 0 ? { stop: sampling.stop } : {}),
      ...(input.stopTokenIds.length > 0 ? { stop_token_ids: [...input.stopTokenIds] } : {}),
      ...(sampling.seed === undefined || !input.sendSeed ? {} : { sampling_seed: sampling.seed }),
    },
    return_logprob: true,
    ...(sampling.topLogprobs > 0 ? { top_logprobs_num: sampling.topLogprobs } : {}),
    stream: true,
    ...(input.adapterName === null ? {} : { lora_path: input.adapterName }),
  };
}

/** Whether the server takes `sampling_seed`: a generation of no tokens with it. */
export function toWireSamplingSeedProbe(): WireGenerateRequest {
  return { input_ids: [0], sampling_params: { max_new_tokens: 0, temperature: 1, top_p: 1, sampling_seed: 0 }, return_logprob: true, stream: false };
}

/** An SGLang older than `sampling_seed` refuses it as `SamplingParams(**sampling_params)` does any unknown key. */
export const unknownSamplingSeedPattern = /unexpected keyword argument '?sampling_seed/i;

/** Scoring: no new tokens, log-probs of the prompt from `logprobStart` on. */
export function toWireScoreRequest(input: {
  tokenIds: number[];
  logprobStart: number;
  topK: number;
  adapterName: string | null;
}): WireGenerateRequest {
  return {
    input_ids: input.tokenIds,
    sampling_params: { max_new_tokens: 0, temperature: 1, top_p: 1 },
    return_logprob: true,
    logprob_start_len: input.logprobStart,
    ...(input.topK > 0 ? { top_logprobs_num: input.topK } : {}),
    stream: false,
    ...(input.adapterName === null ? {} : { lora_path: input.adapterName }),
  };
}

const tripleSchema = z.tuple([z.number().nullable(), z.number().int(), z.string().nullish()], z.unknown());
const tripleListSchema = z.array(tripleSchema);

const generateOutputSchema = z.object({
  output_ids: tokenIdsSchema.nullish(),
  meta_info: z.object({
    finish_reason: z.object({ type: z.string(), matched: z.unknown().nullish() }).nullish(),
    completion_tokens: z.number().int().nullish(),
    prompt_tokens: z.number().int().nullish(),
    weight_version: z.unknown().nullish(),
    output_token_logprobs: tripleListSchema.nullish(),
    output_top_logprobs: z.array(tripleListSchema.nullable()).nullish(),
    input_token_logprobs: tripleListSchema.nullish(),
    input_top_logprobs: z.array(tripleListSchema.nullable()).nullish(),
  }),
});

export interface LogprobTriple {
  /** NaN for the null log-prob of a first prompt position. */
  logprob: number;
  id: number;
}

export interface GenerateOutput {
  outputIds: number[];
  /** Null until the request finished. */
  finishType: string | null;
  /** Cumulative count of generated tokens, when reported. */
  completionTokens: number | null;
  promptTokens: number | null;
  /** `meta_info.weight_version` as text (SGLang's default is `default`); null when absent. */
  weightVersion: string | null;
  outputLogprobs: LogprobTriple[];
  outputTop: LogprobTriple[][];
  inputLogprobs: LogprobTriple[];
  inputTop: LogprobTriple[][];
}

type WireTriple = z.infer<typeof tripleSchema>;

function toTriple(triple: WireTriple): LogprobTriple {
  return { logprob: triple[0] ?? Number.NaN, id: triple[1] };
}

/** Parses one `/generate` stream payload. */
export function parseGenerateChunk(data: string): GenerateOutput {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (error) {
    throw new ClawrlError('upstream_error', `sglang sent malformed JSON: ${data.slice(0, 200)}`, { cause: error });
  }
  return parseGenerateOutput(json);
}

/** Parses a `/generate` answer (a batch answer is an array: its first item is taken). */
export function parseGenerateOutput(json: unknown): GenerateOutput {
  const parsed = generateOutputSchema.safeParse(Array.isArray(json) ? json[0] : json);
  if (!parsed.success) {
    throw new ClawrlError('upstream_error', `sglang sent an unexpected /generate answer: ${parsed.error.message}`, { cause: parsed.error });
  }
  const meta = parsed.data.meta_info;
  return {
    outputIds: parsed.data.output_ids ?? [],
    finishType: meta.finish_reason?.type ?? null,
    completionTokens: meta.completion_tokens ?? null,
    promptTokens: meta.prompt_tokens ?? null,
    weightVersion: typeof meta.weight_version === 'string' || typeof meta.weight_version === 'number' ? String(meta.weight_version) : null,
    outputLogprobs: (meta.output_token_logprobs ?? []).map(toTriple),
    outputTop: (meta.output_top_logprobs ?? []).map((entries) => (entries ?? []).map(toTriple)),
    inputLogprobs: (meta.input_token_logprobs ?? []).map(toTriple),
    inputTop: (meta.input_top_logprobs ?? []).map((entries) => (entries ?? []).map(toTriple)),
  };
}

/** SGLang's native LoRA endpoints answer `{success, error_message}`. */
const loraAnswerSchema = z.object({ success: z.boolean().nullish(), error_message: z.string().nullish() });

export function checkLoraAnswer(json: unknown, action: string): void {
  const parsed = loraAnswerSchema.safeParse(json);
  if (!parsed.success) throw new ClawrlError('upstream_error', `sglang answered ${action} unexpectedly: ${parsed.error.message}`);
  if (parsed.data.success === false) {
    throw new ClawrlError('upstream_error', `sglang could not ${action}: ${parsed.data.error_message ?? 'no reason given'}`);
  }
}

export interface WireLoraRequest {
  lora_name: string;
  lora_path?: string;
}

/** `POST /update_weights_from_disk` (engines.md §2.3): only the fields clawrl needs, as field sets grow by version. */
export interface WireUpdateWeightsFromDiskRequest {
  model_path: string;
  weight_version: string;
}

const updateWeightsAnswerSchema = z.object({ success: z.boolean(), message: z.string().nullish() });

/** SGLang answers `{success, message, num_paused_requests}` (HTTP 400 when it failed). */
export function checkUpdateWeightsAnswer(json: unknown): void {
  const parsed = updateWeightsAnswerSchema.safeParse(json);
  if (!parsed.success) throw new ClawrlError('upstream_error', `sglang answered /update_weights_from_disk unexpectedly: ${parsed.error.message}`);
  if (!parsed.data.success) throw new ClawrlError('upstream_error', `sglang could not update its weights: ${parsed.data.message ?? 'no reason given'}`);
}

