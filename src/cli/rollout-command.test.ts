import { describe, expect, it } from 'vitest';
import type { RolloutResult } from '../eval/rollout/rollout-result.js';
import { formatRolloutResult } from './rollout-command.js';

function resultWith(rewardMode: RolloutResult['rewardMode'], processVariedGroups: number | null): RolloutResult {
  return {
    env: 'arithmetic', group: 8, tasksPerStep: 4, seed: 1, rewardMode, normalizeStd: false, model: 'builtin:tiny', evalSize: 40, evalEvery: 1,
    baseAccuracy: 0.4, finalAccuracy: 0.45,
    steps: [1, 2].map((step) => ({ step, reward: 0.5, accuracy: 0.45, processReward: rewardMode === 'outcome' ? null : -1, groups: 4, zeroVarianceGroups: 1, processVariedGroups, turns: 32, trainedTurns: 24, train: 'trained', policyVersion: step })),
    serverArguments: null, startedAt: '2026-12-07T00:00:00.000Z', durationSeconds: 60,
  };
}

describe('formatRolloutResult', () => {
  it('says nothing of process rewards in outcome mode', () => {
    expect(formatRolloutResult(resultWith('outcome', null))).not.toContain('process rewards');
  });

  it('counts the groups in which the process rewards varied', () => {
    const text = formatRolloutResult(resultWith('outcome+process', 3));
    expect(text).toContain('process rewards varied within 6 of 8 groups');
    expect(text).not.toContain('changed no advantage');
  });

  it('warns when the judge gave every rollout of each group the same process reward', () => {
    expect(formatRolloutResult(resultWith('outcome+process', 0))).toContain('changed no advantage and this run trained as --reward outcome would');
  });
});
