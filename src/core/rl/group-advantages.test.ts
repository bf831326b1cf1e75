import { describe, expect, it } from 'vitest';
import { groupAdvantages, processRewardsVary } from './group-advantages.js';

describe('groupAdvantages', () => {
  it('subtracts the group mean at each turn index', () => {
    const result = groupAdvantages([[1], [0], [0], [1]]);
    expect(result.advantages).toEqual([[0.5], [-0.5], [-0.5], [0.5]]);
    expect(result).toMatchObject({ zeroVariance: false, zeroVarianceIndices: 0, indices: 1 });
  });

  it('divides by the standard deviation when asked', () => {
    const result = groupAdvantages([[1], [0]], { normalizeStd: true, epsilon: 0 });
    expect(result.advantages).toEqual([[1], [-1]]);
  });

  it('drops and counts a group whose rollouts all got the same reward', () => {
    const result = groupAdvantages([[1], [1], [1]]);
    expect(result.advantages).toEqual([[null], [null], [null]]);
    expect(result).toMatchObject({ zeroVariance: true, zeroVarianceIndices: 1 });
  });

  it('groups multi-turn rewards by turn index and drops a turn no other rollout reached', () => {
    const result = groupAdvantages([[1, 2, 5], [0, 2]]);
    expect(result.advantages).toEqual([[0.5, null, null], [-0.5, null]]);
    expect(result).toMatchObject({ zeroVariance: false, zeroVarianceIndices: 1, indices: 2 });
  });
});

describe('processRewardsVary', () => {
  it('is false when every rollout of the group got the same process reward at each turn index', () => {
    expect(processRewardsVary([[[-1, -1, -1]], [[-1, -1]], [[-1]]])).toBe(false);
    expect(processRewardsVary([[[1], [0, 0]], [[1], []]])).toBe(false);
  });
  it('is true when two rollouts differ at some turn index, a turn without votes counting as 0', () => {
    expect(processRewardsVary([[[1, 1]], [[1, -1]]])).toBe(true);
    expect(processRewardsVary([[[1], [1]], [[1], []]])).toBe(true);
  });
});
