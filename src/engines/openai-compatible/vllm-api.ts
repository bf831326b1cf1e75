/**
 * Wire shapes of vLLM's scoring, tokenizing and runtime-LoRA endpoints (engines.md §1.3, §1.5,
 * §1.6) and their conversion.
 */
import { z } from 'zod';
import { tokenIdsSchema } from './chat-completions-api.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { TokenLogprob } from '../../spec/inference-engine.js';

export interface WireScoreRequest {
  model: string;
  prompt: number[];
  max_tokens: 1;
  prompt_logprobs: number;
  temperature: 1;
  add_special_tokens: false;
}

/**
 * `max_tokens: 1` because some vLLM versions reject 0 without `echo`; the one generated token
 * is ignored. `prompt_logprobs: k` returns, per position, the actual token and the top k.
 */
export function toWireScoreRequest(model: string, tokenIds: number[], topK: number): WireScoreRequest {
  return { model, prompt: tokenIds, max_tokens: 1, prompt_logprobs: topK, temperature: 1, add_special_tokens: false };
}

const positionSchema = z.record(z.string(), z.object({ logprob: z.number().nullish(), rank: z.number().nullish(), decoded_token: z.string().nullish() })).nullable();

const completionSchema = z.object({
  choices: z.array(z.object({ prompt_logprobs: z.array(positionSchema).nullish() })).nullish(),
  prompt_logprobs: z.array(positionSchema).nullish(),
});

export interface ScoredPosition {
  logprob: number;
  /** Alternatives by rank, best first. */
  top: TokenLogprob[];
}

function malformed(detail: string): ClawrlError {
  return new ClawrlError('upstream_error', `vllm answered /v1/completions with unusable prompt_logprobs: ${detail}`);
}

/**
 * Reads `prompt_logprobs[i][String(id)]` for each position from `from` on; `top` keeps the
 * entries ranked within `topK`.
 */
export function parseScoreResponse(json: unknown, tokenIds: readonly number[], from: number, topK: number): ScoredPosition[] {
  const parsed = completionSchema.safeParse(json);
  if (!parsed.success) throw malformed(parsed.error.message);
  const positions = parsed.data.choices?.[0]?.prompt_logprobs ?? parsed.data.prompt_logprobs;
  if (!positions || positions.length !== tokenIds.length) throw malformed(`expected ${tokenIds.length} positions, got ${positions?.length ?? 0}`);
  const scored: ScoredPosition[] = [];
  for (let position = from; position < tokenIds.length; position += 1) {
    const entries = positions[position];
    const id = tokenIds[position] ?? -1;
    const actual = entries?.[String(id)];
    if (actual?.logprob === undefined || actual.logprob === null) throw malformed(`no log-prob for token ${id} at position ${position}`);
    const top = Object.entries(entries ?? {})
      .filter(([, entry]) => entry.rank !== undefined && entry.rank !== null && entry.rank <= topK && typeof entry.logprob === 'number')
      .sort(([, left], [, right]) => (left.rank ?? 0) - (right.rank ?? 0))
      .map(([key, entry]) => ({ id: Number(key), text: entry.decoded_token ?? '', logprob: entry.logprob ?? Number.NaN }));
    scored.push({ logprob: actual.logprob, top });
  }
  return scored;
}

const tokenizeSchema = z.object({ tokens: tokenIdsSchema });

export function parseTokenizeResponse(json: unknown): number[] {
  const parsed = tokenizeSchema.safeParse(json);
  if (!parsed.success) throw new ClawrlError('upstream_error', `vllm answered /tokenize unexpectedly: ${parsed.error.message}`);
  return parsed.data.tokens;
}

export interface WireLoadLoraRequest {
  lora_name: string;
  lora_path: string;
}

export interface WireUnloadLoraRequest {
  lora_name: string;
}
