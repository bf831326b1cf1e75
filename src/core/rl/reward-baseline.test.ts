import { describe, expect, it } from 'vitest';
import { rewardBaselines, type BaselineSample } from './reward-baseline.js';

const sample = (method: BaselineSample['method'], score: number | null): BaselineSample => ({ method, score });

describe('rewardBaselines', () => {
  it('has none without a baseline', () => {
    expect(rewardBaselines([sample('rl', -1), sample('rl', 1)], 'none')).toEqual([null, null]);
  });

  it("is the mean of the batch's other rewards", () => {
    const [first, , , positive] = rewardBaselines([sample('rl', -1), sample('rl', -1), sample('rl', -1), sample('rl', 1)], 'batch');
    // The others of a −1: −1, −1, +1 → −1/3; of the +1: three −1s → −1.
    expect(first).toBeCloseTo(-1 / 3, 12);
    expect(positive).toBe(-1);
  });

  it('skips samples without a reward: OPD samples and a null or 0 score neither get one nor count', () => {
    const baselines = rewardBaselines([sample('combine', 1), sample('combine', -1), sample('opd', 1), sample('combine', 0), sample('combine', null)], 'batch');
    expect(baselines).toEqual([-1, 1, null, null, null]);
  });

  it("exempts rollout samples: their group advantage neither gets the batch's mean taken off nor counts in the live samples'", () => {
    const rollout = (score: number): BaselineSample => ({ method: 'rl', score, source: 'rollout' });
    const live = (score: number): BaselineSample => ({ method: 'rl', score, source: 'live' });
    // Without the exemption the rollouts' 0.75s would take a baseline and lift the live −1's to 0.5/3.
    expect(rewardBaselines([live(-1), rollout(0.75), live(1), rollout(0.75), sample('rl', -1)], 'batch')).toEqual([0, null, -1, null, 0]);
    expect(rewardBaselines([rollout(-0.5), rollout(0.5)], 'negative')).toEqual([null, null]);
  });

  it('gives a lone rewarded sample none', () => {
    expect(rewardBaselines([sample('rl', -1), sample('opd', null)], 'batch')).toEqual([null, null]);
  });

  it('takes a negative baseline only where the other rewards are below zero on average', () => {
    const [bad, , , good] = rewardBaselines([sample('rl', -1), sample('rl', -1), sample('rl', -1), sample('rl', 1)], 'negative');
    expect(bad).toBeCloseTo(-1 / 3, 12);
    expect(good).toBe(-1);
    // The others of the −1 average +1: no baseline pushes it below its own −1.
    expect(rewardBaselines([sample('combine', 1), sample('combine', 1), sample('combine', 1), sample('combine', -1)], 'negative')).toEqual([0, 0, 0, 0]);
  });
});
