import { describe, expect, it } from 'vitest';
import type { TokenLogprob } from '../../spec/inference-engine.js';
import type { SampleMethod } from '../../spec/records.js';
import { advantagesOf, defaultAdvantageOptions, hasSignal, type AdvantageOptions, type AdvantageSample, type SampleAdvantages } from './advantages.js';
import { sampleBuilders, type SampleInput } from './build-samples.js';
import type { RewardBaselineKind } from './reward-baseline.js';
import { createSeededRandom, type SeededRandom } from '../seeded-random.js';
import { judgedSampleThen, trainedAdvantagesThen } from './testing/judged-advantages-reference.js';

const methods: readonly SampleMethod[] = ['rl', 'opd', 'combine'];
const baselines: readonly RewardBaselineKind[] = ['none', 'batch', 'negative'];

function topList(random: SeededRandom, size: number): TokenLogprob[] {
  const ids = random.shuffle(Array.from({ length: 12 }, (_, id) => id)).slice(0, size);
  return ids.map((id) => ({ id, text: String(id), logprob: -random.next() * 6 }));
}

/** A judged turn as the judge sees it: some score or none, a hint or none, a teacher or not, top lists or not. */
function judgedTurn(random: SeededRandom): SampleInput {
  const length = random.integer(1, 5);
  const rollout = Array.from({ length }, () => -random.next() * 5);
  const hint = random.chance(0.8) ? 'a hint' : null;
  const withTop = random.chance(0.6);
  const teacher = random.chance(0.1)
    ? { unavailable: 'engine-cannot-score' }
    : {
        logprobs: rollout.map((value) => value + (random.next() - 0.5) * 6),
        ...(withTop ? { top: Array.from({ length }, () => (random.chance(0.15) ? [] : topList(random, random.integer(1, 6)))) } : {}),
      };
  return {
    responseTokenIds: Array.from({ length }, (_, index) => index + 100),
    rolloutLogprobs: rollout,
    // No 0: the judge dropped a zero score then; the trainer decides on it now (tests below).
    score: random.pick([-1, 1, null, 0.5, -0.25]),
    hint,
    teacher: hint === null ? null : teacher,
    ...(withTop ? { studentTop: Array.from({ length }, () => topList(random, random.integer(1, 6))) } : {}),
    supportTopK: random.pick([0, 0, 2, 4]),
  };
}

function expectClose(actual: SampleAdvantages[], expected: ReturnType<typeof trainedAdvantagesThen>): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((sample, index) => {
    const then = expected[index];
    expect(sample.advantages.length).toBe(then?.advantages.length);
    sample.advantages.forEach((value, position) => expect(Math.abs(value - (then?.advantages[position] ?? Number.NaN))).toBeLessThanOrEqual(1e-9));
    expect(sample.support === null).toBe(then?.support === null);
    sample.support?.forEach((targets, position) => {
      const targetsThen = then?.support?.[position];
      expect(targets.tokenIds).toEqual(targetsThen?.tokenIds);
      targets.advantages.forEach((value, token) => expect(Math.abs(value - (targetsThen?.advantages[token] ?? Number.NaN))).toBeLessThanOrEqual(1e-9));
    });
  });
}

describe('advantagesOf', () => {
  it('gives the trainer the advantages it trained on when the judge combined them, to 1e-9, for every method, weight, clip and baseline', () => {
    const random = createSeededRandom('advantages-then-and-now');
    let compared = 0;
    for (let batchIndex = 0; batchIndex < 400; batchIndex += 1) {
      const options: AdvantageOptions = {
        rlWeight: random.pick([1, 0.5, 2, 0]),
        opdWeight: random.pick([1, 0.25, 3]),
        opdClip: random.pick([1, 0.5, 2.5]),
        rewardBaseline: random.pick(baselines),
        groupNormalizeStd: random.chance(0.5),
      };
      // A batch may mix methods (the judge's --method changed during a run), except that rl samples
      // took the baseline scaled by w_rl before, though their reward never was (see the next test).
      const method = random.pick(methods);
      const batchMethods = options.rlWeight === 1 ? () => random.pick(methods) : () => (method === 'rl' ? 'combine' : method);
      const judged = Array.from({ length: random.integer(1, 8) }, () => ({ method: batchMethods(), input: judgedTurn(random) }));
      const then: (ReturnType<typeof judgedSampleThen> & { status: 'ready' })[] = [];
      const now: AdvantageSample[] = [];
      for (const { method: sampleMethod, input } of judged) {
        const before = judgedSampleThen(sampleMethod, input, { clip: options.opdClip, rlWeight: options.rlWeight, opdWeight: options.opdWeight });
        const built = sampleBuilders[sampleMethod](input);
        // The judge drops the same turns, for the same reasons, as before.
        expect(built.status).toBe(before.status);
        if (before.status !== 'ready' || built.status !== 'ready') continue;
        then.push(before);
        now.push({ method: sampleMethod, score: input.score, lossMask: built.lossMask, distillationGaps: built.distillationGaps, support: built.support, judgedAdvantages: null });
      }
      expectClose(advantagesOf(now, options), trainedAdvantagesThen(then, options.rewardBaseline, options.rlWeight));
      compared += now.length;
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('gives a group of 8 rewards its GRPO advantages, with and without the deviation, keeping |A| > 1', () => {
    const group = (rewards: readonly number[]): AdvantageSample[] =>
      rewards.map((score) => ({ method: 'rl', score, group: { id: 'run-s1-t0', turnIndex: 0 }, lossMask: [1, 1], distillationGaps: null, support: null, judgedAdvantages: null }));
    const advantages = (rewards: readonly number[], groupNormalizeStd: boolean) =>
      advantagesOf(group(rewards), { ...defaultAdvantageOptions, rewardBaseline: 'batch', groupNormalizeStd }).map((sample) => sample.advantages);
    // One success among eight: mean 1/8, standard deviation √(1/8 · 7/8) ≈ 0.3307.
    const lone = [1, 0, 0, 0, 0, 0, 0, 0];
    expect(advantages(lone, false)).toEqual([[0.875, 0.875], ...Array.from({ length: 7 }, () => [-0.125, -0.125])]);
    const normalized = advantages(lone, true);
    expect(normalized[0]?.[0]).toBeCloseTo(0.875 / (Math.sqrt(7 / 64) + 1e-6), 9);
    expect(normalized[0]?.[0]).toBeGreaterThan(2.6);
    expect(normalized[1]?.[0]).toBeCloseTo(-0.125 / (Math.sqrt(7 / 64) + 1e-6), 9);
    // Integrated rewards (outcome + mean vote) spread wider than ±1: nothing is clamped either way.
    const integrated = [2, 1 + 1 / 3, 0, -1, 1, 0, 2, -1 / 3];
    const mean = integrated.reduce((sum, reward) => sum + reward, 0) / 8;
    const deviation = Math.sqrt(integrated.reduce((sum, reward) => sum + (reward - mean) ** 2, 0) / 8);
    advantages(integrated, false).forEach((sample, index) => expect(sample[0]).toBeCloseTo((integrated[index] as number) - mean, 12));
    advantages(integrated, true).forEach((sample, index) => expect(sample[1]).toBeCloseTo(((integrated[index] as number) - mean) / (deviation + 1e-6), 9));
    expect(Math.max(...advantages(integrated, false).map((sample) => Math.abs(sample[0] as number)))).toBeGreaterThan(1);
    // A group whose rewards all agree has nothing to prefer: every advantage is 0, so none has a signal.
    expect(advantagesOf(group([1, 1, 1, 1, 1, 1, 1, 1]), { ...defaultAdvantageOptions, groupNormalizeStd: true }).map(hasSignal)).toEqual(Array.from({ length: 8 }, () => false));
  });

  it('leaves a zero reward without a baseline no signal, and gives it a direction against one', () => {
    const batch: AdvantageSample[] = [
      { method: 'rl', score: 0, lossMask: [1], distillationGaps: null, support: null, judgedAdvantages: null },
      { method: 'rl', score: 1, lossMask: [1], distillationGaps: null, support: null, judgedAdvantages: null },
    ];
    expect(advantagesOf(batch).map(hasSignal)).toEqual([false, true]);
    expect(advantagesOf(batch, { ...defaultAdvantageOptions, rewardBaseline: 'batch' }).map((sample) => sample.advantages)).toEqual([[-1], [1]]);
  });

  it('takes the baseline of an rl sample unweighted, as its reward: w_rl is the weight of combine samples', () => {
    const batch: AdvantageSample[] = [
      { method: 'rl', score: 1, lossMask: [1], distillationGaps: null, support: null, judgedAdvantages: null },
      { method: 'rl', score: -1, lossMask: [1], distillationGaps: null, support: null, judgedAdvantages: null },
    ];
    const options = { ...defaultAdvantageOptions, rlWeight: 0.5, rewardBaseline: 'batch' as const };
    expect(advantagesOf(batch, options).map((sample) => sample.advantages)).toEqual([[2], [-2]]);
  });

  it('forms combine advantages from the stored reward and gaps with the trainer\'s weights and clip', () => {
    const sample: AdvantageSample = { method: 'combine', score: -1, lossMask: [1, 1, 1], distillationGaps: [0.25, 1.5, -3.75], support: null, judgedAdvantages: null };
    expect(advantagesOf([sample])[0]?.advantages).toEqual([-0.75, 0, -2]);
    expect(advantagesOf([sample], { ...defaultAdvantageOptions, rlWeight: 0.5, opdWeight: 2, opdClip: 2 })[0]?.advantages).toEqual([0, 2.5, -4.5]);
    // No hint: the reward alone; an OPD sample ignores the score.
    expect(advantagesOf([{ ...sample, distillationGaps: null }])[0]?.advantages).toEqual([-1, -1, -1]);
    expect(advantagesOf([{ ...sample, method: 'opd' }])[0]?.advantages).toEqual([0.25, 1, -1]);
  });

  it('moves the distillation onto the support set, weighted and clipped per token', () => {
    const sample: AdvantageSample = {
      method: 'combine',
      score: 1,
      lossMask: [1],
      distillationGaps: [0.5],
      support: [[
        { id: 4, studentLogprob: -0.5, teacherLogprob: -0.25, gap: 0.25, weight: 0.75 },
        { id: 9, studentLogprob: -1, teacherLogprob: null, gap: -3, weight: 0.25 },
        { id: 2, studentLogprob: -2, teacherLogprob: null, gap: null, weight: 0 },
      ]],
      judgedAdvantages: null,
    };
    const [result] = advantagesOf([sample], { ...defaultAdvantageOptions, opdWeight: 2 });
    expect(result).toEqual({ advantages: [1], support: [{ tokenIds: [4, 9], advantages: [2 * 0.75 * 0.25, 2 * 0.25 * -1] }] });
  });

  it('trains a sample judged before the upgrade on its judged advantages, less w_rl times the baseline as before', () => {
    const judged: AdvantageSample = {
      method: 'combine',
      score: 1,
      lossMask: [1, 1],
      distillationGaps: null,
      support: null,
      judgedAdvantages: { advantages: [0.7, 0.2], support: [{ tokenIds: [3], advantages: [0.1] }, { tokenIds: [], advantages: [] }] },
    };
    const fresh: AdvantageSample = { method: 'combine', score: -1, lossMask: [1], distillationGaps: [0], support: null, judgedAdvantages: null };
    const [old, now] = advantagesOf([judged, fresh], { ...defaultAdvantageOptions, rlWeight: 0.5, rewardBaseline: 'batch' });
    expect(old?.advantages[0]).toBeCloseTo(0.7 + 0.5, 12);
    expect(old?.advantages[1]).toBeCloseTo(0.2 + 0.5, 12);
    expect(old?.support).toEqual([{ tokenIds: [3], advantages: [0.1] }, { tokenIds: [], advantages: [] }]);
    expect(now?.advantages).toEqual([0.5 * (-1 - 1)]);
  });
});
