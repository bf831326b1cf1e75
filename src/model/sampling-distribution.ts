/**
 * Picks the next token from one row of logits, in JavaScript and float64.
 *
 * Which log-prob is recorded (the trainer's importance ratio must compare like with like):
 * the log-prob of the sampled token under the temperature-scaled distribution
 * `log_softmax(logits / temperature)`, BEFORE top-k/top-p truncation. That is a quantity the
 * trainer can recompute exactly from a forward pass (scoring/training at the same temperature),
 * whereas the truncated distribution depends on the whole candidate set. With temperature 0
 * (greedy) the recorded log-prob is that of the untempered distribution (temperature 1). The
 * returned alternatives come from the same recorded distribution.
 *
 * Truncation order follows HF/vLLM: top-k first, then top-p over the renormalised survivors;
 * the token is drawn from the renormalised truncated distribution.
 */
import type { SeededRandom } from '../core/seeded-random.js';

export interface SamplingParameters {
  /** 0 = greedy. */
  temperature: number;
  /** 1 = no nucleus filter. */
  topP: number;
  /** 0 = no top-k filter. */
  topK: number;
  /** How many alternatives to report per step. */
  topLogprobs: number;
}

export interface TokenChoice {
  tokenId: number;
  logprob: number;
  /** The `topLogprobs` most likely tokens of the recorded distribution, most likely first. */
  top: { tokenId: number; logprob: number }[];
}

function logSoftmax(logits: Float32Array, temperature: number): Float64Array {
  const scaled = new Float64Array(logits.length);
  let maximum = -Infinity;
  for (let index = 0; index < logits.length; index += 1) {
    const value = (logits[index] ?? 0) / temperature;
    scaled[index] = value;
    if (value > maximum) maximum = value;
  }
  let sum = 0;
  for (const value of scaled) sum += Math.exp(value - maximum);
  const normaliser = maximum + Math.log(sum);
  for (let index = 0; index < scaled.length; index += 1) scaled[index] = (scaled[index] ?? 0) - normaliser;
  return scaled;
}

/** Indices of the `count` largest values, largest first (partial selection, O(V·count) for small counts). */
export function largestIndices(values: ArrayLike<number>, count: number): number[] {
  const chosen: number[] = [];
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index] ?? -Infinity;
    if (chosen.length === count && value <= (values[chosen[count - 1] ?? 0] ?? -Infinity)) continue;
    let position = chosen.length === count ? count - 1 : chosen.length;
    if (chosen.length < count) chosen.push(index);
    while (position > 0 && (values[chosen[position - 1] ?? 0] ?? -Infinity) < value) {
      chosen[position] = chosen[position - 1] ?? 0;
      position -= 1;
    }
    chosen[position] = index;
  }
  return chosen;
}

/** Candidate token ids sorted by log-prob, already cut by top-k; enough of them to cover top-p. */
function sortedCandidates(logprobs: Float64Array, topK: number, topP: number): number[] {
  const size = logprobs.length;
  if (topK > 0 && topK < size) return largestIndices(logprobs, topK);
  // The nucleus is a prefix of the tokens above any threshold whose total mass is at least topP,
  // so only those need sorting; fall back to all tokens when the threshold is too coarse.
  let candidates: number[] = [];
  let maximum = -Infinity;
  for (const value of logprobs) if (value > maximum) maximum = value;
  const threshold = maximum + Math.log(1e-6);
  let mass = 0;
  for (let index = 0; index < size; index += 1) {
    const value = logprobs[index] ?? -Infinity;
    if (value >= threshold) {
      candidates.push(index);
      mass += Math.exp(value);
    }
  }
  if (mass < topP) candidates = Array.from({ length: size }, (_, index) => index);
  return candidates.sort((left, right) => (logprobs[right] ?? 0) - (logprobs[left] ?? 0));
}

function drawToken(logprobs: Float64Array, parameters: SamplingParameters, random: SeededRandom): number {
  const { topK, topP } = parameters;
  if (topK <= 0 && topP >= 1) {
    let remaining = random.next();
    let last = 0;
    for (let index = 0; index < logprobs.length; index += 1) {
      const probability = Math.exp(logprobs[index] ?? -Infinity);
      if (probability === 0) continue;
      last = index;
      remaining -= probability;
      if (remaining < 0) return index;
    }
    return last;
  }
  const candidates = sortedCandidates(logprobs, topK, topP);
  let kept = candidates.length;
  const probabilities = candidates.map((tokenId) => Math.exp(logprobs[tokenId] ?? -Infinity));
  let total = probabilities.reduce((sum, value) => sum + value, 0);
  if (topP < 1) {
    let cumulative = 0;
    for (let index = 0; index < candidates.length; index += 1) {
      cumulative += (probabilities[index] ?? 0) / total;
      if (cumulative >= topP) {
        kept = index + 1;
        break;
      }
    }
    total = probabilities.slice(0, kept).reduce((sum, value) => sum + value, 0);
  }
  let remaining = random.next() * total;
  for (let index = 0; index < kept; index += 1) {
    remaining -= probabilities[index] ?? 0;
    if (remaining < 0) return candidates[index] ?? 0;
  }
  return candidates[kept - 1] ?? 0;
}

/** The distribution renormalised over the allowed tokens (the rest −∞), for drawing only. */
function restrictedTo(logprobs: Float64Array, allowed: Uint8Array): Float64Array {
  const restricted = new Float64Array(logprobs.length).fill(-Infinity);
  let maximum = -Infinity;
  for (let index = 0; index < logprobs.length; index += 1) {
    if (allowed[index] === 1 && (logprobs[index] ?? -Infinity) > maximum) maximum = logprobs[index] ?? -Infinity;
  }
  let sum = 0;
  for (let index = 0; index < logprobs.length; index += 1) if (allowed[index] === 1) sum += Math.exp((logprobs[index] ?? -Infinity) - maximum);
  const normaliser = maximum + Math.log(sum);
  for (let index = 0; index < logprobs.length; index += 1) if (allowed[index] === 1) restricted[index] = (logprobs[index] ?? -Infinity) - normaliser;
  return restricted;
}

/**
 * @param allowed constrained decoding's mask (1: may be drawn): the token is drawn from the
 *   distribution renormalised over it, and the recorded log-prob is still the model's own.
 */
export function chooseToken(logits: Float32Array, parameters: SamplingParameters, random: SeededRandom, allowed?: Uint8Array): TokenChoice {
  const greedy = parameters.temperature <= 0;
  const logprobs = logSoftmax(logits, greedy ? 1 : parameters.temperature);
  const drawn = allowed === undefined || !allowed.includes(1) ? logprobs : restrictedTo(logprobs, allowed);
  const tokenId = greedy ? (largestIndices(drawn, 1)[0] ?? 0) : drawToken(drawn, parameters, random);
  const top =
    parameters.topLogprobs > 0
      ? largestIndices(logprobs, parameters.topLogprobs).map((id) => ({ tokenId: id, logprob: logprobs[id] ?? -Infinity }))
      : [];
  return { tokenId, logprob: logprobs[tokenId] ?? -Infinity, top };
}
