import { describe, expect, it } from 'vitest';
import { axisTicks, exponentialTick, integerIncrements } from './chart-ticks.js';

describe('chart ticks', () => {
  it('steps integer axes by whole numbers only, so versions and steps never read 0.5', () => {
    expect(integerIncrements.slice(0, 6)).toEqual([1, 2, 5, 10, 20, 50]);
    expect(integerIncrements.every((increment) => Number.isInteger(increment))).toBe(true);
    expect(axisTicks('integer').incrs).toBe(integerIncrements);
  });

  it('labels learning rates as 1e-3, keeping the digits that tell ticks apart', () => {
    expect([0.002, 0.0015, 0.001, 0.0005, 0, 0.0030000000000000005, 1e-5].map(exponentialTick)).toEqual(['2e-3', '1.5e-3', '1e-3', '5e-4', '0', '3e-3', '1e-5']);
  });
});
