import { describe, expect, it } from 'vitest';
import type { OptionKey } from './configuration.js';
import type { PersonalizeResult } from '../eval/personalize/personalize-result.js';
import {
  defaultExperimentAnchorCoefficient,
  defaultExperimentOpdSupportK,
  defaultExperimentTrainEvery,
  formatPersonalizeResult,
  serveArgumentsOf,
  type PersonalizeCommandInput,
} from './eval-command.js';

function inputFor(configuration: Record<string, unknown>, explicit: OptionKey[] = []): PersonalizeCommandInput {
  return {
    options: { user: 'teacher', method: 'combine', sessions: '20', seed: '1' },
    configuration: { apiKey: [], ...configuration } as PersonalizeCommandInput['configuration'],
    explicitKeys: new Set(explicit),
    configFile: undefined,
    environment: {},
  };
}

function flagValue(argumentsList: string[], flag: string): string | undefined {
  const index = argumentsList.indexOf(flag);
  return index === -1 ? undefined : argumentsList[index + 1];
}

describe('serveArgumentsOf', () => {
  it("gives the built-in model the experiment defaults: full parameters, a step every 4 samples, a support set of 4, leave-one-out rewards, the anchor, serve's reward weight", () => {
    const serve = serveArgumentsOf(inputFor({ model: 'builtin:tiny', trainEvery: 16, rlWeight: 1, opdSupportK: 0 }), 'combine');
    expect(serve.slice(0, 2)).toEqual(['--method', 'combine']);
    expect(flagValue(serve, '--train-params')).toBe('full');
    expect(flagValue(serve, '--train-every')).toBe(String(defaultExperimentTrainEvery));
    expect(defaultExperimentOpdSupportK).toBe(4);
    expect(flagValue(serve, '--opd-support-k')).toBe('4');
    expect(flagValue(serveArgumentsOf(inputFor({ model: 'builtin:tiny', opdSupportK: 0 }, ['opdSupportK']), 'combine'), '--opd-support-k')).toBe('0');
    expect(flagValue(serve, '--reward-baseline')).toBe('batch');
    expect(flagValue(serveArgumentsOf(inputFor({ model: 'builtin:tiny', rewardBaseline: 'none' }, ['rewardBaseline']), 'combine'), '--reward-baseline')).toBe('none');
    expect(defaultExperimentAnchorCoefficient).toBe(0.5);
    expect(flagValue(serve, '--anchor-coefficient')).toBe('0.5');
    expect(flagValue(serveArgumentsOf(inputFor({ model: 'builtin:tiny', anchorCoefficient: 0 }, ['anchorCoefficient']), 'combine'), '--anchor-coefficient')).toBe('0');
    expect(flagValue(serve, '--rl-weight')).toBeUndefined();
    expect(flagValue(serve, '--train-epochs')).toBeUndefined();
  });

  it("leaves another model on serve's defaults, and passes what the user set", () => {
    const other = serveArgumentsOf(inputFor({ model: '/models/Qwen3-4B', rlWeight: 1 }), 'combine');
    expect(flagValue(other, '--rl-weight')).toBeUndefined();
    expect(flagValue(other, '--train-params')).toBeUndefined();
    expect(flagValue(other, '--anchor-coefficient')).toBeUndefined();
    const chosen = serveArgumentsOf(
      inputFor(
        { model: 'builtin:tiny', rlWeight: 0.5, opdWeight: 2, klCoefficient: 0.1, anchorCoefficient: 0.5, anchorTopK: 4, rewardBaseline: 'batch', trainEvery: 8, learningRateHalfLife: 4, trainEpochs: 2 },
        ['rlWeight', 'opdWeight', 'klCoefficient', 'anchorCoefficient', 'anchorTopK', 'rewardBaseline', 'trainEvery', 'learningRateHalfLife', 'trainEpochs'],
      ),
      'combine',
    );
    expect(flagValue(chosen, '--rl-weight')).toBe('0.5');
    expect(flagValue(chosen, '--opd-weight')).toBe('2');
    expect(flagValue(chosen, '--kl-coefficient')).toBe('0.1');
    expect(flagValue(chosen, '--anchor-coefficient')).toBe('0.5');
    expect(flagValue(chosen, '--anchor-top-k')).toBe('4');
    expect(flagValue(chosen, '--reward-baseline')).toBe('batch');
    expect(flagValue(chosen, '--train-every')).toBe('8');
    expect(flagValue(chosen, '--learning-rate-half-life')).toBe('4');
    expect(flagValue(chosen, '--train-epochs')).toBe('2');
    const oracle = serveArgumentsOf(inputFor({ model: 'builtin:tiny', judge: 'rules', judgeRules: 'user:student' }), 'combine');
    expect([flagValue(oracle, '--judge'), flagValue(oracle, '--judge-rules')]).toEqual(['rules', 'user:student']);
    expect(oracle).not.toContain('--judge-hint-grounding');
    // A switch goes as its flag alone: a value after it would be a stray argument to serve.
    const grounded = serveArgumentsOf(inputFor({ model: 'builtin:tiny', judgeHintGrounding: true }), 'combine');
    const at = grounded.indexOf('--judge-hint-grounding');
    expect(at).toBeGreaterThan(-1);
    expect(grounded[at + 1]?.startsWith('--') ?? true).toBe(true);
  });

  it("leaves sampling to the model's own defaults unless the user names them", () => {
    const defaults = serveArgumentsOf(inputFor({ model: 'builtin:tiny' }), 'combine');
    for (const flag of ['--temperature', '--top-p', '--top-k']) expect(defaults).not.toContain(flag);
    const chosen = serveArgumentsOf(inputFor({ model: 'builtin:tiny', temperature: 1, topP: 1, topK: 0 }), 'combine');
    expect([flagValue(chosen, '--temperature'), flagValue(chosen, '--top-p'), flagValue(chosen, '--top-k')]).toEqual(['1', '1', '0']);
  });

  it('never trains the base', () => {
    const base = serveArgumentsOf(inputFor({ model: 'builtin:tiny', rlWeight: 1 }), 'base');
    expect(base[0]).toBe('--no-train');
    expect(base).not.toContain('--method');
  });
});

describe('formatPersonalizeResult', () => {
  const result: PersonalizeResult = {
    user: 'student', method: 'combine', seed: 1, sessionsToSuccess: null, consecutiveCriterion: null, baseProbeRate: 0.3,
    successThreshold: 0.8, probeSize: 50, model: 'builtin:tiny', judge: null, serverMethod: 'combine', sessions: [],
    probe: [{ policyVersion: 0, afterSession: 0, satisfactionRate: 0.3, satisfied: 15, size: 50, mixedVersions: false }],
  };

  it('says what the server sampled with when the admin view told it, and nothing when it did not', () => {
    expect(formatPersonalizeResult({ ...result, sampling: { temperature: 0.7, topP: 0.95 } })).toContain('sampled at               temperature 0.7, top_p 0.95 (');
    expect(formatPersonalizeResult({ ...result, sampling: { temperature: 0.6, topP: 0.95, topK: 20 } })).toContain('top_p 0.95, top_k 20');
    expect(formatPersonalizeResult({ ...result, sampling: null })).not.toContain('sampled at');
  });
});
