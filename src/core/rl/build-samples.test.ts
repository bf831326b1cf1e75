import { describe, expect, it } from 'vitest';
import type { FeedbackRecord } from '../../spec/records.js';
import {
  buildCombineSample,
  buildOpdSample,
  buildRlSample,
  buildSupportSet,
  distillationGapsOf,
  sampleBuilders,
  sampleGroupOf,
  topKOverlap,
  turnRewardOf,
  type SampleInput,
} from './build-samples.js';

const base: SampleInput = {
  responseTokenIds: [10, 11, 12],
  rolloutLogprobs: [-0.5, -2, -0.25],
  score: -1,
  hint: 'Keep the answer under forty words.',
  // Gaps teacher − rollout: 0.25, 1.5, −3.75.
  teacher: { logprobs: [-0.25, -0.5, -4] },
};

describe('distillationGapsOf', () => {
  it('is teacher − rollout per token, unclipped (the trainer clips)', () => {
    expect(distillationGapsOf([-0.25, -0.5, -4], [-0.5, -2, -0.25])).toEqual([0.25, 1.5, -3.75]);
    expect(distillationGapsOf([-Infinity], [-1])).toEqual([-Infinity]);
  });
});

describe('buildRlSample', () => {
  it('keeps a scored turn with a full loss mask and nothing of the teacher (the score is the sample\'s reward)', () => {
    expect(buildRlSample(base)).toEqual({ status: 'ready', lossMask: [1, 1, 1], distillationGaps: null, teacherLogprobs: null, support: null });
  });

  it('keeps a zero reward and an unbounded rollout reward: whether they push anything is the trainer\'s baseline\'s to say', () => {
    expect(buildRlSample({ ...base, score: 0 })).toMatchObject({ status: 'ready' });
    expect(buildRlSample({ ...base, score: 1.75 })).toMatchObject({ status: 'ready' });
  });

  it('drops turns without a score, without a response or with misaligned log-probs', () => {
    expect(buildRlSample({ ...base, score: null })).toEqual({ status: 'dropped', reason: 'no-score' });
    expect(buildRlSample({ ...base, responseTokenIds: [], rolloutLogprobs: [] })).toEqual({
      status: 'dropped',
      reason: 'empty-response',
    });
    expect(buildRlSample({ ...base, rolloutLogprobs: [-1] })).toEqual({ status: 'dropped', reason: 'logprobs-length-mismatch' });
  });
});

describe('buildOpdSample', () => {
  it('keeps the unclipped teacher − rollout gaps and the teacher\'s log-probs', () => {
    expect(buildOpdSample(base)).toEqual({
      status: 'ready',
      lossMask: [1, 1, 1],
      distillationGaps: [0.25, 1.5, -3.75],
      teacherLogprobs: [-0.25, -0.5, -4],
      support: null,
    });
  });

  it('drops turns without a hint or a usable teacher, with the reason', () => {
    expect(buildOpdSample({ ...base, hint: null })).toEqual({ status: 'dropped', reason: 'no-hint' });
    expect(buildOpdSample({ ...base, teacher: { unavailable: 'engine-cannot-score' } })).toEqual({
      status: 'dropped',
      reason: 'engine-cannot-score',
    });
    expect(buildOpdSample({ ...base, teacher: { logprobs: [-1, -1] } })).toEqual({
      status: 'dropped',
      reason: 'teacher-length-mismatch',
    });
    expect(buildOpdSample({ ...base, teacher: { logprobs: [-1, Number.NaN, -1] } })).toEqual({
      status: 'dropped',
      reason: 'teacher-not-a-number',
    });
  });

  it('adds the student top-k support set when asked and both top lists are present', () => {
    const studentTop = [
      [{ id: 10, text: 'a', logprob: -0.5 }, { id: 20, text: 'b', logprob: -1 }, { id: 30, text: 'c', logprob: -3 }],
      [{ id: 11, text: 'd', logprob: -2 }],
      [{ id: 12, text: 'e', logprob: -0.25 }],
    ];
    const teacherTop = [[{ id: 20, text: 'b', logprob: -0.25 }, { id: 10, text: 'a', logprob: -0.75 }], [], []];
    const sample = buildOpdSample({ ...base, studentTop, supportTopK: 2, teacher: { logprobs: [-0.25, -0.5, -4], top: teacherTop } });
    // w = softmax(−0.5, −1) over the set: 0.6225, 0.3775.
    const [first, second] = [1 / (1 + Math.exp(-0.5)), Math.exp(-0.5) / (1 + Math.exp(-0.5))];
    expect(sample).toMatchObject({
      status: 'ready',
      distillationGaps: [0.25, 1.5, -3.75],
      support: [
        [
          { id: 10, studentLogprob: -0.5, teacherLogprob: -0.75, gap: -0.25, weight: expect.closeTo(first, 12) },
          { id: 20, studentLogprob: -1, teacherLogprob: -0.25, gap: 0.75, weight: expect.closeTo(second, 12) },
        ],
        [{ id: 11, studentLogprob: -2, teacherLogprob: null, gap: null, weight: 1 }],
        [{ id: 12, studentLogprob: -0.25, teacherLogprob: null, gap: null, weight: 1 }],
      ],
    });
    expect(buildOpdSample({ ...base, studentTop, supportTopK: 0, teacher: { logprobs: [-0.25, -0.5, -4], top: teacherTop } })).toMatchObject({
      support: null,
    });
  });
});

describe('buildCombineSample', () => {
  it('keeps the reward (its score) and the unclipped gaps apart', () => {
    expect(buildCombineSample(base)).toEqual({ status: 'ready', lossMask: [1, 1, 1], distillationGaps: [0.25, 1.5, -3.75], teacherLogprobs: [-0.25, -0.5, -4], support: null });
  });

  it('with a support set, keeps each support token\'s unclipped gap and weight', () => {
    const studentTop = [[{ id: 10, text: 'a', logprob: -0.5 }], [{ id: 11, text: 'b', logprob: -2 }], [{ id: 12, text: 'c', logprob: -0.25 }]];
    const teacherTop = [[{ id: 10, text: 'a', logprob: -0.25 }], [{ id: 11, text: 'b', logprob: -0.5 }], [{ id: 12, text: 'c', logprob: -4 }]];
    const sample = buildCombineSample({ ...base, studentTop, supportTopK: 4, teacher: { logprobs: [-0.25, -0.5, -4], top: teacherTop } });
    expect(sample.status === 'ready' ? sample.support?.map((position) => [position[0]?.gap, position[0]?.weight]) : []).toEqual([[0.25, 1], [1.5, 1], [-3.75, 1]]);
  });

  it('keeps a scored turn without a usable hint, and a hinted turn without a score', () => {
    expect(buildCombineSample({ ...base, hint: null })).toEqual({ status: 'ready', lossMask: [1, 1, 1], distillationGaps: null, teacherLogprobs: null, support: null });
    expect(buildCombineSample({ ...base, teacher: { unavailable: 'engine-cannot-score' } })).toMatchObject({ status: 'ready', distillationGaps: null });
    expect(buildCombineSample({ ...base, score: null })).toMatchObject({ status: 'ready', distillationGaps: [0.25, 1.5, -3.75] });
    expect(buildCombineSample({ ...base, score: 0 })).toMatchObject({ status: 'ready', distillationGaps: [0.25, 1.5, -3.75] });
  });

  it('drops a turn with neither a hint nor a score; a zero score is a reward', () => {
    expect(buildCombineSample({ ...base, hint: null, score: null })).toEqual({ status: 'dropped', reason: 'no-signal (no-hint, no score)' });
    expect(buildCombineSample({ ...base, hint: null, score: 0 })).toMatchObject({ status: 'ready', distillationGaps: null });
    expect(buildCombineSample({ ...base, teacher: { unavailable: 'engine-cannot-score' }, score: null })).toEqual({
      status: 'dropped',
      reason: 'no-signal (engine-cannot-score, no score)',
    });
  });

  it('is the builder sampleBuilders picks for combine', () => {
    expect(sampleBuilders.combine).toBe(buildCombineSample);
    expect(sampleBuilders.rl).toBe(buildRlSample);
    expect(sampleBuilders.opd).toBe(buildOpdSample);
  });
});

describe('topKOverlap', () => {
  const token = (id: number, logprob: number) => ({ id, text: String(id), logprob });

  it('sums the size of the top-k intersections over positions', () => {
    const student = [
      [token(1, -0.1), token(2, -0.2), token(3, -0.3), token(4, -0.4), token(5, -5)],
      [token(7, -0.1), token(8, -0.2)],
    ];
    const teacher = [
      // Top-4 by log-prob is 5, 1, 9, 2 whatever the order given: overlap {1, 2, 5 ∉ student top-4} = 2.
      [token(9, -0.3), token(1, -0.2), token(5, -0.1), token(2, -0.25), token(3, -9)],
      [token(8, -1)],
    ];
    expect(topKOverlap(student, teacher, 4)).toBe(3);
    expect(topKOverlap(student, teacher, 1)).toBe(0);
    expect(topKOverlap(student, teacher.slice(0, 1), 4)).toBe(2);
  });

  it('keeps only the k most likely student tokens in the support set', () => {
    const support = buildSupportSet([[token(1, -3), token(2, -0.5), token(3, -1)]], [[token(3, -0.5), token(4, -0.75)]], 2);
    const weights = [1 / (1 + Math.exp(-0.5)), Math.exp(-0.5) / (1 + Math.exp(-0.5))];
    expect(support).toEqual([
      [
        // Outside the teacher's list: the gap is taken against its lowest entry, −0.75.
        { id: 2, studentLogprob: -0.5, teacherLogprob: null, gap: -0.25, weight: expect.closeTo(weights[0] ?? 0, 12) },
        { id: 3, studentLogprob: -1, teacherLogprob: -0.5, gap: 0.5, weight: expect.closeTo(weights[1] ?? 0, 12) },
      ],
    ]);
  });

  it('keeps the gap to a token the teacher does not list unclipped, and none where the teacher listed nothing', () => {
    // −4 − (−0.1) = −3.9 against the list's lowest entry; the trainer clips it.
    expect(buildSupportSet([[token(7, -0.1)]], [[token(8, -0.05), token(9, -4)]], 4)).toEqual([[{ id: 7, studentLogprob: -0.1, teacherLogprob: null, gap: expect.closeTo(-3.9, 12), weight: 1 }]]);
    expect(buildSupportSet([[token(7, -0.1)]], [[]], 4)).toEqual([[{ id: 7, studentLogprob: -0.1, teacherLogprob: null, gap: null, weight: 1 }]]);
  });
});

describe('turnRewardOf and sampleGroupOf', () => {
  const feedback = (fields: Partial<FeedbackRecord>): FeedbackRecord => ({ id: 1, turnId: 't', score: null, text: null, hint: null, tenant: null, user: null, createdAt: 0, ...fields });
  const rollout = { runId: 'r', environment: 'arithmetic', step: 1, group: 'r-s1-t0', turnIndex: 2, outcomeReward: 1, processReward: 1 / 3, reward: 4 / 3 };

  it("takes a rollout's posted reward, unbounded, else the feedback's score, else the judge's", () => {
    expect(turnRewardOf(feedback({ rollout }), -1)).toBe(4 / 3);
    expect(turnRewardOf(feedback({ score: 0.5 }), -1)).toBe(0.5);
    expect(turnRewardOf(feedback({ text: 'thanks' }), -1)).toBe(-1);
    expect(turnRewardOf(null, null)).toBeNull();
  });

  it("places a rollout's sample in its group at its turn index; live traffic and an ungrouped rollout in none", () => {
    expect(sampleGroupOf(feedback({ rollout }))).toEqual({ id: 'r-s1-t0', turnIndex: 2 });
    expect(sampleGroupOf(feedback({ rollout: { ...rollout, group: null } }))).toBeNull();
    expect(sampleGroupOf(feedback({ score: 1 }))).toBeNull();
    expect(sampleGroupOf(null)).toBeNull();
  });
});
