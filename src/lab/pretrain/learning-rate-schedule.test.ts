import { describe, expect, it } from 'vitest';
import { learningRateAt } from './learning-rate-schedule.js';

describe('learningRateAt', () => {
  const schedule = { peak: 2e-3, warmupSteps: 10, totalSteps: 110 };
  it('warms up linearly, peaks, then decays by cosine to a tenth of the peak', () => {
    expect(learningRateAt(0, schedule)).toBeCloseTo(2e-4, 12);
    expect(learningRateAt(9, schedule)).toBeCloseTo(2e-3, 12);
    expect(learningRateAt(60, schedule)).toBeCloseTo(1.1e-3, 12);
    expect(learningRateAt(110, schedule)).toBeCloseTo(2e-4, 12);
    expect(learningRateAt(30, schedule)).toBeGreaterThan(learningRateAt(31, schedule));
  });
});
