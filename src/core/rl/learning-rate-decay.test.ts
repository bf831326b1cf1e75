import { describe, expect, it } from 'vitest';
import { decayedLearningRate } from './learning-rate-decay.js';

describe('decayedLearningRate', () => {
  it('keeps the base rate without a half-life', () => {
    expect(decayedLearningRate(1e-3, 1, {})).toBe(1e-3);
    expect(decayedLearningRate(1e-3, 50, { halfLifeSteps: undefined })).toBe(1e-3);
  });

  it('starts at the base rate and halves every half-life', () => {
    expect(decayedLearningRate(1e-3, 1, { halfLifeSteps: 4 })).toBe(1e-3);
    expect(decayedLearningRate(1e-3, 5, { halfLifeSteps: 4 })).toBeCloseTo(5e-4, 12);
    expect(decayedLearningRate(1e-3, 9, { halfLifeSteps: 4 })).toBeCloseTo(2.5e-4, 12);
    expect(decayedLearningRate(1e-3, 3, { halfLifeSteps: 4 })).toBeCloseTo(1e-3 * 2 ** -0.5, 12);
  });
});
