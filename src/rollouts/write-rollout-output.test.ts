import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accuracyPoints } from './rollout-chart.js';
import type { RolloutResult } from './rollout-result.js';
import { mapWithLimit } from './run-rollout.js';
import { readRolloutResults, writeRolloutOutput } from './write-rollout-output.js';

const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-rollout-out-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function resultOf(seed: number): RolloutResult {
  return {
    env: 'arithmetic', group: 8, tasksPerStep: 4, seed, rewardMode: 'outcome', normalizeStd: false, model: 'builtin:tiny', evalSize: 50, evalEvery: 2,
    baseAccuracy: 0.4, finalAccuracy: 0.6,
    steps: [1, 2].map((step) => ({ step, reward: 0.5, accuracy: step === 2 ? 0.6 : null, processReward: null, groups: 4, zeroVarianceGroups: 1, turns: 32, trainedTurns: 24, train: 'trained', policyVersion: step })),
    serverArguments: null, startedAt: '2026-12-07T00:00:00.000Z', durationSeconds: 60,
  };
}

describe('writeRolloutOutput', () => {
  it('writes rollout-<env>-seed<seed>.json and charts every result in the folder', () => {
    writeFileSync(path.join(folder, 'rollout-broken.json'), '{"env": 1}');
    writeRolloutOutput(folder, resultOf(1));
    const written = writeRolloutOutput(folder, resultOf(2));
    expect(path.basename(written.resultFile)).toBe('rollout-arithmetic-seed2.json');
    expect(written.charted).toBe(2);
    expect(readRolloutResults(folder).map((result) => result.seed)).toEqual([1, 2]);
    const chart = readFileSync(written.chartFile, 'utf8');
    expect(chart.match(/<polyline/g)).toHaveLength(4);
    expect(chart).toContain('arithmetic · outcome · seed 2 (0.40 → 0.60)');
  });

  it('refuses a result the schema rejects', () => {
    expect(() => writeRolloutOutput(folder, { ...resultOf(3), baseAccuracy: 2 })).toThrow();
  });

  it('charts the base at step 0, then the measured steps', () => {
    expect(accuracyPoints(resultOf(1))).toEqual([[0, 0.4], [2, 0.6]]);
  });
});

describe('mapWithLimit', () => {
  it('keeps order and never runs more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const results = await mapWithLimit([5, 1, 4, 2, 3], 2, async (value) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, value));
      running -= 1;
      return value * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });
});
