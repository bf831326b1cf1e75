/**
 * The temperature a turn's recorded log-probs were taken under, so every later score of the same
 * tokens (the trainer's policy, the teacher's, the anchor's reference) compares like with like:
 * the sampling temperature, and for greedy decoding (temperature 0) the plain softmax.
 */
import type { SamplingOptions } from '../spec/chat.js';

export function logprobTemperatureOf(sampling: Pick<SamplingOptions, 'temperature'>): number {
  return sampling.temperature > 0 ? sampling.temperature : 1;
}
