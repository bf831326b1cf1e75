/**
 * The advantages as clawrl formed them before the trainer did it alone (commit c16f78d): the judge
 * combined w_rl·r + w_opd·clip(Δ) into each sample (`buildRlSample`, `buildOpdSample`,
 * `buildCombineSample`, `buildSupportSet` of `core/rl/build-samples.ts` then) and the trainer took
 * w_rl·baseline off it (`applyRewardBaseline` of `core/rl/reward-baseline.ts` then). Kept verbatim in
 * substance, for `core/rl/advantages.test.ts`'s property that the trainer still trains on the same
 * numbers. Test-only: nothing in production imports it.
 */
import type { TokenLogprob } from '../../../spec/inference-engine.js';
import type { SampleMethod } from '../../../spec/records.js';
import type { RewardBaselineKind } from '../reward-baseline.js';
import type { SampleInput } from '../build-samples.js';

export interface JudgeOptionsThen {
  clip: number;
  rlWeight: number;
  opdWeight: number;
}

interface SupportTokenThen {
  id: number;
  weightedAdvantage: number | null;
}

export type JudgedSampleThen =
  | { status: 'ready'; method: SampleMethod; score: number | null; advantages: number[]; support: SupportTokenThen[][] | null }
  | { status: 'dropped'; reason: string };

function clipValue(value: number, bound: number): number {
  return Math.min(bound, Math.max(-bound, value));
}

function opdAdvantages(teacher: readonly number[], rollout: readonly number[], clip: number): number[] {
  return teacher.map((value, index) => clipValue(value - (rollout[index] as number), clip));
}

function topIds(top: readonly TokenLogprob[], k: number): TokenLogprob[] {
  return [...top].sort((left, right) => right.logprob - left.logprob).slice(0, k);
}

function buildSupportSet(studentTop: readonly (readonly TokenLogprob[])[], teacherTop: readonly (readonly TokenLogprob[])[], k: number, clip: number, scale: number): SupportTokenThen[][] {
  return studentTop.map((position, index) => {
    const reported = teacherTop[index] ?? [];
    const teacher = new Map(reported.map((token) => [token.id, token.logprob]));
    const lowestReported = reported.length === 0 ? null : Math.min(...reported.map((token) => token.logprob));
    const support = topIds(position, k);
    const highest = Math.max(...support.map((token) => token.logprob));
    const normalizer = support.reduce((sum, token) => sum + Math.exp(token.logprob - highest), 0);
    return support.map((token) => {
      const bound = teacher.get(token.id) ?? lowestReported;
      const advantage = bound === null ? null : clipValue(bound - token.logprob, clip);
      const weight = Math.exp(token.logprob - highest) / normalizer;
      return { id: token.id, weightedAdvantage: advantage === null ? null : scale * weight * advantage };
    });
  });
}

function teacherOf(input: SampleInput): { logprobs: readonly number[] } | { problem: string } {
  if (input.hint === null) return { problem: 'no-hint' };
  if (input.teacher === null) return { problem: 'no-teacher' };
  if ('unavailable' in input.teacher) return { problem: input.teacher.unavailable };
  if (input.teacher.logprobs.length !== input.responseTokenIds.length) return { problem: 'teacher-length-mismatch' };
  if (input.teacher.logprobs.some((value) => Number.isNaN(value))) return { problem: 'teacher-not-a-number' };
  return input.teacher;
}

function supportOf(input: SampleInput, clip: number, scale: number): SupportTokenThen[][] | null {
  const k = input.supportTopK ?? 0;
  if (k <= 0 || input.studentTop === undefined || input.teacher === null || 'unavailable' in input.teacher) return null;
  const teacherTop = input.teacher.top;
  if (teacherTop === undefined || input.studentTop.length !== input.responseTokenIds.length) return null;
  return buildSupportSet(input.studentTop, teacherTop, k, clip, scale);
}

/** What the judge stored then. */
export function judgedSampleThen(method: SampleMethod, input: SampleInput, options: JudgeOptionsThen): JudgedSampleThen {
  if (input.responseTokenIds.length === 0) return { status: 'dropped', reason: 'empty-response' };
  if (input.rolloutLogprobs.length !== input.responseTokenIds.length) return { status: 'dropped', reason: 'logprobs-length-mismatch' };
  const length = input.responseTokenIds.length;
  const ready = (advantages: number[], support: SupportTokenThen[][] | null): JudgedSampleThen => ({ status: 'ready', method, score: input.score, advantages, support });
  const teacher = teacherOf(input);
  if (method === 'rl') {
    if (input.score === null) return { status: 'dropped', reason: 'no-score' };
    if (input.score === 0) return { status: 'dropped', reason: 'zero-score' };
    return ready(new Array<number>(length).fill(input.score), null);
  }
  if (method === 'opd') {
    if ('problem' in teacher) return { status: 'dropped', reason: teacher.problem };
    const support = supportOf(input, options.clip, 1);
    return ready(support === null ? opdAdvantages(teacher.logprobs, input.rolloutLogprobs, options.clip) : new Array<number>(length).fill(0), support);
  }
  const reward = input.score ?? 0;
  const hasTeacher = !('problem' in teacher);
  if (!hasTeacher && reward === 0) return { status: 'dropped', reason: 'no-signal' };
  const support = hasTeacher ? supportOf(input, options.clip, options.opdWeight) : null;
  const distillation = hasTeacher && support === null ? opdAdvantages(teacher.logprobs, input.rolloutLogprobs, options.clip) : new Array<number>(length).fill(0);
  return ready(distillation.map((delta) => options.rlWeight * reward + options.opdWeight * delta), support);
}

/** What the trainer then trained a batch of stored samples on: advantages less w_rl·baseline, and the support targets. */
export function trainedAdvantagesThen(
  samples: readonly (JudgedSampleThen & { status: 'ready' })[],
  kind: RewardBaselineKind,
  rlWeight: number,
): { advantages: number[]; support: { tokenIds: number[]; advantages: number[] }[] | null }[] {
  const rewardOf = (sample: JudgedSampleThen & { status: 'ready' }) => (sample.method === 'opd' || sample.score === null || sample.score === 0 ? null : sample.score);
  const rewards = samples.map(rewardOf);
  const rewarded = rewards.filter((reward): reward is number => reward !== null);
  const total = rewarded.reduce((sum, reward) => sum + reward, 0);
  return samples.map((sample, index) => {
    const reward = rewards[index] ?? null;
    let advantages = [...sample.advantages];
    if (kind !== 'none' && reward !== null && rewarded.length >= 2) {
      const mean = (total - reward) / (rewarded.length - 1);
      const baseline = kind === 'negative' ? Math.min(0, mean) : mean;
      advantages = sample.advantages.map((advantage) => advantage - rlWeight * baseline);
    }
    const support =
      sample.support === null
        ? null
        : sample.support.map((position) => {
            const kept = position.filter((token) => token.weightedAdvantage !== null);
            return { tokenIds: kept.map((token) => token.id), advantages: kept.map((token) => token.weightedAdvantage as number) };
          });
    return { advantages, support };
  });
}
