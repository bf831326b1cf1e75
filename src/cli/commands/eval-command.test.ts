import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PersonalizeResult } from '../../lab/personalize/personalize-result.js';
import { loadSimulatedUser } from '../../lab/personalize/load-simulated-user.js';
import { createRulesJudge } from '../../judge/create-rules-judge.js';
import { resolveConfiguration } from '../configuration/configuration.js';
import { defaultExperimentTrainEvery, explicitKeysOf, formatPersonalizeResult, personalizeSchema, serveArgumentsOf, type PersonalizeCommandInput } from './eval-command.js';
import { loadRecipe } from '../configuration/load-recipe.js';
import { loadRulesJudgeSpec } from '../configuration/load-rules-judge-spec.js';
import { experimentKnobsOf, experimentSettingsOf, judgeRulesFileOf, writeExperimentRecipe } from '../configuration/personalize-recipe.js';

function inputFor(flags: Record<string, unknown>): PersonalizeCommandInput {
  return {
    options: { user: 'teacher', method: 'combine', sessions: '20', seed: '1' },
    configuration: resolveConfiguration(personalizeSchema, { flags, file: {}, environment: {} }).configuration,
    explicitKeys: explicitKeysOf(flags, {}, {}),
    knobs: {},
    configFile: undefined,
    environment: {},
  };
}

const files = { recipe: '/run/experiment-recipe.json', judgeRules: undefined };

function flagValue(argumentsList: string[], flag: string): string | undefined {
  const index = argumentsList.indexOf(flag);
  return index === -1 ? undefined : argumentsList[index + 1];
}

describe('serveArgumentsOf', () => {
  it('gives the built-in model its recipe\'s parameters and a step every 4 samples, and passes the recipe it wrote', () => {
    const serve = serveArgumentsOf(inputFor({ model: 'builtin:tiny' }), 'combine', files);
    expect(serve.slice(0, 2)).toEqual(['--method', 'combine']);
    expect(flagValue(serve, '--train-params')).toBe('full');
    expect(flagValue(serve, '--train-every')).toBe(String(defaultExperimentTrainEvery));
    expect(flagValue(serve, '--recipe')).toBe(files.recipe);
    // Sessions end when a follow-up no longer fits, so the experiment's server never fits prompts.
    expect(flagValue(serve, '--prompt-overflow')).toBe('error');
    for (const flag of ['--rl-weight', '--learning-rate', '--judge-rules', '--anchor-coefficient']) expect(serve).not.toContain(flag);
  });

  it("leaves another model on serve's defaults, and passes what the user set", () => {
    const other = serveArgumentsOf(inputFor({ model: '/models/Qwen3-4B' }), 'combine', files);
    expect(flagValue(other, '--rl-weight')).toBeUndefined();
    expect(flagValue(other, '--train-params')).toBeUndefined();
    const chosen = serveArgumentsOf(
      inputFor({ model: 'builtin:tiny', rlWeight: '0.5', opdWeight: '2', klCoefficient: '0.1', trainEvery: '8', servedModelName: ['tiny', 'tutor'] }),
      'combine',
      { recipe: files.recipe, judgeRules: '/run/judge-rules.json' },
    );
    expect(flagValue(chosen, '--rl-weight')).toBe('0.5');
    expect(flagValue(chosen, '--opd-weight')).toBe('2');
    expect(flagValue(chosen, '--kl-coefficient')).toBe('0.1');
    expect(flagValue(chosen, '--train-every')).toBe('8');
    expect(flagValue(chosen, '--judge-rules')).toBe('/run/judge-rules.json');
    expect(chosen.filter((argument, index) => chosen[index - 1] === '--served-model-name')).toEqual(['tiny', 'tutor']);
  });

  it("leaves sampling to the model's own defaults unless the user names them", () => {
    const defaults = serveArgumentsOf(inputFor({ model: 'builtin:tiny' }), 'combine', files);
    for (const flag of ['--temperature', '--top-p', '--top-k']) expect(defaults).not.toContain(flag);
    const chosen = serveArgumentsOf(inputFor({ model: 'builtin:tiny', temperature: '1', topP: '1', topK: '0' }), 'combine', files);
    expect([flagValue(chosen, '--temperature'), flagValue(chosen, '--top-p'), flagValue(chosen, '--top-k')]).toEqual(['1', '1', '0']);
  });

  it('never trains the base', () => {
    const base = serveArgumentsOf(inputFor({ model: 'builtin:tiny' }), 'base', files);
    expect(base[0]).toBe('--no-train');
    expect(base).not.toContain('--method');
  });
});

describe('the experiment recipe', () => {
  it("is the built-in model's recipe for builtin:tiny: the anchor, a support set of 4, leave-one-out rewards", () => {
    expect(experimentSettingsOf('builtin:tiny')).toMatchObject({ anchorCoefficient: 0.5, anchorTopK: 8, opdSupportK: 4, rewardBaseline: 'batch', trainEpochs: 1, judgeWeights: 'base', judgeHintGrounding: false });
    expect(experimentSettingsOf('/models/Qwen3-4B')).toMatchObject({ anchorCoefficient: 0, opdSupportK: 4, rewardBaseline: 'batch' });
  });

  it('writes the knobs given over those defaults into a recipe serve reads', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-experiment-recipe-'));
    const knobs = experimentKnobsOf({ anchorCoefficient: '0', opdSupportK: '0', trainEpochs: '2', judgeHintGrounding: true, sessions: '20' });
    expect(knobs).toEqual({ anchorCoefficient: 0, opdSupportK: 0, trainEpochs: 2, judgeHintGrounding: true });
    const recipe = loadRecipe(writeExperimentRecipe(folder, 'builtin:tiny', knobs));
    expect(recipe).toMatchObject({ anchorCoefficient: 0, opdSupportK: 0, trainEpochs: 2, judgeHintGrounding: true, rewardBaseline: 'batch', anchorTopK: 8 });
    // The operator options stay flags of serve, so its defaults (the learning rate) are as before.
    expect(recipe.learningRate).toBeUndefined();
    expect(() => experimentKnobsOf({ anchorTopK: '0' })).toThrow(/--anchor-top-k/);
  });

  it("turns user:<name> into that simulated user's rules-judge spec file", async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-experiment-rules-'));
    const file = judgeRulesFileOf(folder, 'user:student');
    expect(file).toBe(path.join(folder, 'judge-rules.json'));
    expect(JSON.parse(readFileSync(file ?? '', 'utf8')).name).toBe('user-student');
    const judge = createRulesJudge(loadRulesJudgeSpec(file));
    const input = (response: string, nextState: string) => ({
      context: [{ role: 'user' as const, content: 'What is 3 + 4?' }],
      response: { role: 'assistant' as const, content: response },
      nextState: [{ role: 'user' as const, content: nextState }],
      wantHint: true,
    });
    const formatted = await judge.judge(input('1. Add them.\n2. **Answer: 7**', 'Thanks!'), new AbortController().signal);
    expect([formatted.score, formatted.hint]).toEqual([-1, loadSimulatedUser('student').hint]);
    expect(judgeRulesFileOf(folder, '/a/spec.json')).toBe('/a/spec.json');
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
