/**
 * The online trainer's step size over its steps. Constant by default; with a half-life the rate
 * halves every `halfLifeSteps` optimizer steps. Why: a few full-parameter steps on small batches
 * learn a preference fast and then overshoot it (the personalization experiment's probes rise and
 * fall), and a smaller late step keeps what the early ones found.
 */
export interface LearningRateDecay {
  /** Optimizer steps over which the rate halves; undefined keeps it constant. */
  halfLifeSteps?: number | undefined;
}

/** The rate of optimizer step `step` (1 for the first) for a base rate. */
export function decayedLearningRate(baseRate: number, step: number, decay: LearningRateDecay): number {
  const { halfLifeSteps } = decay;
  if (halfLifeSteps === undefined) return baseRate;
  return baseRate * 0.5 ** (Math.max(0, step - 1) / halfLifeSteps);
}
