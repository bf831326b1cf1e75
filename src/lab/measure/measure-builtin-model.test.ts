import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { styleDimensions } from '../../builtin/style.js';
import { runPretrainTinyCommand } from '../../cli/commands/pretrain-tiny-command.js';
import { initializeTensorBackend } from '../../tensor/index.js';
import { defaultMeasureOptions, measureBuiltinModel, statedAnswer } from './measure-builtin-model.js';

// Worker threads run compiled JavaScript: the suite builds dist/ before the tests.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'lab', 'pretrain', 'pretrain-worker.js'), import.meta.url);
let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'clawrl-measure-'));
  await initializeTensorBackend({ backend: 'wasm' });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('statedAnswer', () => {
  it('prefers the boxed value, then the Answer line, then the last number', () => {
    expect(statedAnswer('So 3 + 4 = 7. Final answer: \\boxed{7}. Then 9.')).toBe(7);
    expect(statedAnswer('We add 1,200 and 3.\n**Answer:** 1,203')).toBe(1203);
    expect(statedAnswer('Mia has 12 apples, so she gives away 5 and keeps 7 apples.')).toBe(7);
    expect(statedAnswer('No numbers here.')).toBeNull();
  });
});

describe('measureBuiltinModel', () => {
  it('reports every acceptance figure with consistent counts', async () => {
    const out = path.join(root, 'model');
    await runPretrainTinyCommand({ out, resume: false, tiny: true, steps: 6, workerUrl, log: () => undefined });
    const result = await measureBuiltinModel({ ...defaultMeasureOptions, modelDirectory: out, prompts: 3, samplesPerPrompt: 2, judgeExamples: 2, maxTokens: 24 });
    expect(result.noHintFrequencies.replies).toBe(6);
    for (const dimension of styleDimensions) {
      const shares = Object.values(result.noHintFrequencies[dimension]);
      expect(shares.reduce((sum, share) => sum + share, 0)).toBeCloseTo(1, 2);
    }
    const perDimension = styleDimensions.reduce((sum, dimension) => sum + result.hintFollowing[dimension].count, 0);
    expect(result.hintFollowing.all.count).toBe(perDimension);
    for (const dimension of styleDimensions) {
      const outcomes = Object.values(result.hintFollowingByValue[dimension]);
      // Every hinted reply is counted once under its hinted value, and the diagonal is the rate's hits.
      expect(outcomes.flatMap((counts) => Object.values(counts)).reduce((sum, n) => sum + n, 0)).toBe(result.hintFollowing[dimension].count);
      const hits = Object.entries(result.hintFollowingByValue[dimension]).reduce((sum, [wanted, counts]) => sum + (counts[wanted] ?? 0), 0);
      expect(hits).toBeCloseTo(result.hintFollowing[dimension].rate * result.hintFollowing[dimension].count, 6);
    }
    expect(perDimension).toBeGreaterThanOrEqual(6);
    expect(result.wellFormed.count).toBe(12);
    expect(result.judge.verdictAccuracy.count).toBe(2);
    expect(result.judge.hintNamesDimension.count).toBe(2);
    const byUser = Object.values(result.judge.builtinUsersVerdictByUser);
    expect(byUser).toHaveLength(3);
    expect(byUser.reduce((sum, kinds) => sum + kinds.complaints.count + kinds.thanks.count, 0)).toBe(result.judge.builtinUsersVerdict.count);
    expect(result.judge.builtinUsersVerdict.count).toBeGreaterThan(0);
    const hintsByUser = Object.values(result.judge.builtinUsersHintByUser);
    expect(hintsByUser.reduce((sum, rates) => sum + rates.helpful.count, 0)).toBe(result.judge.builtinUsersHintNamesDimension.count);
    // A hint cannot be both helpful and contrary.
    for (const rates of hintsByUser) expect(rates.helpful.rate + rates.contrary.rate).toBeLessThanOrEqual(1);
    // The judge as the server runs it, on the same number of examples.
    expect(result.deployedJudge?.verdictAccuracy.count).toBe(2);
    expect(result.deployedJudge?.hintNamesDimension.count).toBe(2);
    expect(result.timings.loadSeconds).toBeGreaterThan(0);
    // Six training steps of a toy model cannot pass the bar; the verdicts must say so.
    expect(result.acceptance.judgeVerdictAtLeast90 && result.acceptance.hintFollowingAtLeast90).toBe(false);
    expect(result.acceptance.deployedJudgeVerdictAtLeast90 && result.acceptance.deployedJudgeHintNamesDimensionAtLeast80).toBe(false);
  });
});
