import { describe, expect, it } from 'vitest';
import { applyRewardBaseline, type BaselineSample } from './reward-baseline.js';

const sample = (method: BaselineSample['method'], score: number | null, advantages: number[]): BaselineSample => ({ method, score, advantages });

describe('applyRewardBaseline', () => {
  it('leaves advantages alone without a baseline', () => {
    const samples = [sample('rl', -1, [-1, -1]), sample('rl', 1, [1])];
    expect(applyRewardBaseline(samples, 'none', 1)).toEqual([[-1, -1], [1]]);
  });

  it("measures each reward against the mean of the batch's other rewards", () => {
    const samples = [sample('rl', -1, [-1, -1]), sample('rl', -1, [-1]), sample('rl', -1, [-1]), sample('rl', 1, [1, 1])];
    const [first, , , positive] = applyRewardBaseline(samples, 'batch', 1);
    // The others of a −1: −1, −1, +1 → −1/3; of the +1: three −1s → −1.
    expect(first?.[0]).toBeCloseTo(-2 / 3, 12);
    expect(positive).toEqual([2, 2]);
  });

  it('takes no reward gradient from a batch of equal rewards, and keeps the teacher gap of combine samples', () => {
    const samples = [sample('combine', -1, [-1 + 0.5, -1 - 0.25]), sample('combine', -1, [-1]), sample('rl', -1, [-1])];
    expect(applyRewardBaseline(samples, 'batch', 1)).toEqual([[0.5, -0.25], [0], [0]]);
  });

  it('scales the baseline by the reward weight and skips samples without a reward part', () => {
    const samples = [
      sample('combine', 1, [0.5 * 1 + 0.2]),
      sample('combine', -1, [0.5 * -1]),
      sample('opd', 1, [0.3]),
      sample('combine', 0, [0.1]),
      sample('combine', null, [0.4]),
    ];
    const adjusted = applyRewardBaseline(samples, 'batch', 0.5);
    expect(adjusted[0]?.[0]).toBeCloseTo(0.5 + 0.2 + 0.5, 12);
    expect(adjusted[1]?.[0]).toBeCloseTo(-0.5 - 0.5, 12);
    expect(adjusted.slice(2)).toEqual([[0.3], [0.1], [0.4]]);
  });

  it('keeps a lone rewarded sample as it is', () => {
    expect(applyRewardBaseline([sample('rl', -1, [-1]), sample('opd', null, [0.2])], 'batch', 1)).toEqual([[-1], [0.2]]);
  });

  it('takes a negative baseline only where the other rewards are below zero on average', () => {
    const mostlyBad = [sample('rl', -1, [-1]), sample('rl', -1, [-1]), sample('rl', -1, [-1]), sample('rl', 1, [1])];
    const [bad, , , good] = applyRewardBaseline(mostlyBad, 'negative', 1);
    expect(bad?.[0]).toBeCloseTo(-2 / 3, 12);
    expect(good).toEqual([2]);
    // The others of the −1 average +1: it keeps its −1 where `batch` would make it −2.
    const mostlyGood = [sample('combine', 1, [1]), sample('combine', 1, [1]), sample('combine', 1, [1]), sample('combine', -1, [-1 + 0.25])];
    expect(applyRewardBaseline(mostlyGood, 'negative', 1)).toEqual([[1], [1], [1], [-0.75]]);
    expect(applyRewardBaseline(mostlyGood, 'batch', 1)[3]?.[0]).toBeCloseTo(-1.75, 12);
  });
});
