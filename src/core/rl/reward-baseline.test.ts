import { describe, expect, it } from 'vitest';
import { rewardBaselines, type BaselineSample, type RewardBaselineKind, type RewardShift } from './reward-baseline.js';

const sample = (method: BaselineSample['method'], score: number | null): BaselineSample => ({ method, score });
const grouped = (score: number, id: string, turnIndex = 0): BaselineSample => ({ method: 'rl', score, group: { id, turnIndex } });

/** The baselines alone, for the ungrouped rule (scale 1). */
function baselinesOf(samples: readonly BaselineSample[], kind: RewardBaselineKind): (number | null)[] {
  return rewardBaselines(samples, { kind, groupNormalizeStd: false }).map((shift) => shift?.baseline ?? null);
}

/** (r − b) / s per sample, r where there is no shift. */
function termsOf(samples: readonly BaselineSample[], shifts: readonly (RewardShift | null)[]): (number | null)[] {
  return samples.map((entry, index) => {
    const shift = shifts[index] ?? null;
    return entry.score === null ? null : shift === null ? entry.score : (entry.score - shift.baseline) / shift.scale;
  });
}

describe('rewardBaselines without a group', () => {
  it('has none without a baseline', () => {
    expect(baselinesOf([sample('rl', -1), sample('rl', 1)], 'none')).toEqual([null, null]);
  });

  it("is the mean of the batch's other rewards", () => {
    const [first, , , positive] = baselinesOf([sample('rl', -1), sample('rl', -1), sample('rl', -1), sample('rl', 1)], 'batch');
    // The others of a −1: −1, −1, +1 → −1/3; of the +1: three −1s → −1.
    expect(first).toBeCloseTo(-1 / 3, 12);
    expect(positive).toBe(-1);
  });

  it('skips samples without a reward (OPD samples, a null score); a 0 is a reward and counts', () => {
    const baselines = baselinesOf([sample('combine', 1), sample('combine', -1), sample('opd', 1), sample('combine', 0), sample('combine', null)], 'batch');
    expect(baselines).toEqual([-0.5, 0.5, null, 0, null]);
  });

  it('gives a lone rewarded sample none', () => {
    expect(baselinesOf([sample('rl', -1), sample('opd', null)], 'batch')).toEqual([null, null]);
  });

  it('takes a negative baseline only where the other rewards are below zero on average', () => {
    const [bad, , , good] = baselinesOf([sample('rl', -1), sample('rl', -1), sample('rl', -1), sample('rl', 1)], 'negative');
    expect(bad).toBeCloseTo(-1 / 3, 12);
    expect(good).toBe(-1);
    // The others of the −1 average +1: no baseline pushes it below its own −1.
    expect(baselinesOf([sample('combine', 1), sample('combine', 1), sample('combine', 1), sample('combine', -1)], 'negative')).toEqual([0, 0, 0, 0]);
  });
});

describe('rewardBaselines of a rollout group', () => {
  it('compares a group within itself at each turn index, whatever the batch baseline, and leaves the live samples to theirs', () => {
    const batch = [sample('rl', -1), grouped(1, 'g'), grouped(0, 'g'), grouped(2, 'g', 1), grouped(4, 'g', 1), sample('rl', 1)];
    for (const kind of ['none', 'batch', 'negative'] as const) {
      const terms = termsOf(batch, rewardBaselines(batch, { kind, groupNormalizeStd: false }));
      expect(terms.slice(1, 5)).toEqual([0.5, -0.5, -1, 1]);
    }
    // The live samples' batch baseline counts only the live rewards: the −1's is the +1, not the group's.
    expect(termsOf(batch, rewardBaselines(batch, { kind: 'batch', groupNormalizeStd: false }))).toEqual([-2, 0.5, -0.5, -1, 1, 2]);
  });

  it('gives exactly 0 to a group whose rewards agree and to a turn no other rollout reached, even over the deviation', () => {
    const batch = [grouped(0.1, 'a'), grouped(0.1, 'a'), grouped(0.1, 'a'), grouped(3, 'b', 2)];
    expect(termsOf(batch, rewardBaselines(batch, { kind: 'batch', groupNormalizeStd: true }))).toEqual([0, 0, 0, 0]);
  });

  it('divides by the deviation plus a small epsilon when the recipe asks', () => {
    const batch = [grouped(1, 'g'), grouped(0, 'g')];
    const [first, second] = termsOf(batch, rewardBaselines(batch, { kind: 'none', groupNormalizeStd: true }));
    expect(first).toBeCloseTo(0.5 / (0.5 + 1e-6), 12);
    expect(second).toBeCloseTo(-0.5 / (0.5 + 1e-6), 12);
  });
});
