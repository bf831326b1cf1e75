import type { TrainingDatum } from '../../../spec/training-engine.js';

/** A datum of the tiny test model: a 5-token prompt, a 4-token response whose last token carries no loss. */
export const tinkerTestDatum: TrainingDatum = {
  promptTokenIds: [3, 14, 15, 92, 65],
  responseTokenIds: [35, 89, 79, 32],
  lossMask: [1, 1, 1, 0],
  advantages: [1, -0.5, 1, 1],
  rolloutLogprobs: [-3, -3, -3, -3],
  temperature: 1,
};
