import { describe, expect, it } from 'vitest';
import type { RolloutResult } from '../../rollouts/rollout-result.js';
import { resolveConfiguration } from '../configuration/configuration.js';
import { formatRolloutResult, rolloutSchema, rolloutServeArguments, runRolloutCommand, type RolloutCommandInput } from './rollout-command.js';

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

describe('rolloutServeArguments', () => {
  const judgeOf = (flags: Record<string, unknown>, rewardMode: 'outcome' | 'outcome+process') => {
    const { configuration } = resolveConfiguration(rolloutSchema, { flags, file: {}, environment: {} });
    const input: RolloutCommandInput = {
      options: { env: 'arithmetic', group: '8', tasksPerStep: '4', parallel: '8', steps: '1', evalEvery: '1', evalSize: '4', seed: '1', reward: rewardMode },
      configuration,
      explicitKeys: new Set(Object.keys(flags)),
      configFile: undefined,
      environment: {},
      cwd: '/',
    };
    const serveArguments = rolloutServeArguments(input, rewardMode, 32, '/data/rollout-recipe.json');
    const at = (flag: string) => (serveArguments.includes(flag) ? serveArguments[serveArguments.indexOf(flag) + 1] : undefined);
    return { judge: at('--judge'), judgeRules: at('--judge-rules') };
  };

  it('picks the judge by reward mode, and the rules judge whenever rules are given', () => {
    expect(judgeOf({}, 'outcome')).toEqual({ judge: 'rules', judgeRules: undefined });
    expect(judgeOf({}, 'outcome+process')).toEqual({ judge: 'policy', judgeRules: undefined });
    expect(judgeOf({ judgeRules: 'working.json' }, 'outcome+process')).toEqual({ judge: 'rules', judgeRules: 'working.json' });
    expect(judgeOf({ judge: 'openai' }, 'outcome+process').judge).toBe('openai');
  });
});

describe('runRolloutCommand', () => {
  it('refuses --normalize-std with --url: the server of --url normalises groups as its own recipe says', async () => {
    const flags = { url: 'http://127.0.0.1:9' };
    const { configuration } = resolveConfiguration(rolloutSchema, { flags, file: {}, environment: {} });
    const input: RolloutCommandInput = {
      options: { env: 'arithmetic', group: '8', tasksPerStep: '4', parallel: '8', steps: '1', evalEvery: '1', evalSize: '4', seed: '1', reward: 'outcome', normalizeStd: true },
      configuration,
      explicitKeys: new Set(Object.keys(flags)),
      configFile: undefined,
      environment: {},
      cwd: '/',
    };
    await expect(runRolloutCommand(input)).rejects.toMatchObject({ code: 'configuration_error', param: 'normalize-std' });
  });
});
