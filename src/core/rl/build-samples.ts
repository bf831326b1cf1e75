/**
 * Training samples from judged turns, one builder per method (`--method rl|opd|combine`). Tokens
 * are never touched here: a sample trains on the turn's prompt and response ids exactly as
 * sampled, and these functions record what the judge measured of it, one value per response
 * token. They form no advantage: the trainer does, with its own weights, clip and baseline
 * (`core/rl/advantages.ts`), so no judge setting has to be repeated on the trainer.
 *
 * - Binary RL: the reward r (`turnRewardOf`: a rollout's posted reward, else the feedback's score,
 *   else the judge's). A reward of 0 is kept: whether it pushes anything depends on the baseline,
 *   which is the trainer's (it drops and counts a sample whose advantages all come out 0).
 * - OPD: the gap Δ_t = teacher_t − rollout_t (unclipped), where teacher_t is the log-prob of the
 *   same response token under the hint-augmented prompt.
 * - Combine: both; without a usable hint there is no gap, without a score no reward.
 * - With a support set (`supportTopK` > 0, `buildSupportSet`) each of the student's top k tokens
 *   at each position carries its own gap and weight, and the distillation leaves the sampled token
 *   for the set.
 *
 * A turn that gives no training signal comes back `dropped` with a reason, never as an exception.
 */
import type { TokenLogprob } from '../../spec/inference-engine.js';
import type { FeedbackRecord, SampleGroup, SampleMethod, SupportToken } from '../../spec/records.js';

/** The teacher's view of the response under the hint-augmented prompt. */
export type TeacherScores =
  | { logprobs: readonly number[]; top?: readonly (readonly TokenLogprob[])[] }
  /** The teacher could not be asked (no engine with scoring); the reason becomes the drop reason. */
  | { unavailable: string };

export interface SampleInput {
  responseTokenIds: readonly number[];
  rolloutLogprobs: readonly number[];
  /** The reward r (`turnRewardOf`); null when there is none. */
  score: number | null;
  hint: string | null;
  /** Null when no teacher was asked (no hint, or the method does not use one). */
  teacher: TeacherScores | null;
  /** The student's top-k at each response position, for the optional support set. */
  studentTop?: readonly (readonly TokenLogprob[])[];
  /** Size of the support set; 0 or absent builds none. */
  supportTopK?: number;
}

export type BuiltSample =
  | {
      status: 'ready';
      lossMask: number[];
      /** teacher − rollout per token, unclipped; null without a usable teacher. */
      distillationGaps: number[] | null;
      teacherLogprobs: number[] | null;
      support: SupportToken[][] | null;
    }
  | { status: 'dropped'; reason: string };

export type SampleBuilder = (input: SampleInput) => BuiltSample;

/**
 * The reward a turn's sample trains on. The latest feedback overrides the judge: a rollout's
 * (`clawrl rollout`, a manager) carries its reward in its provenance, unbounded (an outcome plus a
 * process part, `core/rl/aggregate-votes.ts`); a person's or an agent's is its score in −1..1.
 * Without feedback the judge's majority is the reward.
 */
export function turnRewardOf(feedback: FeedbackRecord | null, judgeScore: number | null): number | null {
  return feedback?.rollout?.reward ?? feedback?.score ?? judgeScore;
}

/** The rollout group a turn's sample is compared within (its latest feedback's provenance); null for none. */
export function sampleGroupOf(feedback: FeedbackRecord | null): SampleGroup | null {
  const rollout = feedback?.rollout ?? null;
  return rollout === null || rollout.group === null ? null : { id: rollout.group, turnIndex: rollout.turnIndex };
}

export function clipValue(value: number, bound: number): number {
  return Math.min(bound, Math.max(-bound, value));
}

/** teacher − rollout per token. */
export function distillationGapsOf(teacher: readonly number[], rollout: readonly number[]): number[] {
  return teacher.map((value, index) => value - (rollout[index] as number));
}

function topIds(top: readonly TokenLogprob[], k: number): TokenLogprob[] {
  return [...top].sort((left, right) => right.logprob - left.logprob).slice(0, k);
}

/**
 * OpenClaw-RL v2's support set: at each response position the student's k most likely tokens,
 * each with w_v = softmax over the set of the student's log-probs (its probability renormalized
 * over the set) and the gap Δ_v = ℓ_teacher(v) − ℓ_student(v). The trainer puts w_opd·w_v·clip(Δ_v,
 * −C, C) on each token (`core/rl/advantages.ts`), so OPD moves the student's whole distribution where
 * teacher and student disagree, not only the token it happened to sample (the paper's ablation:
 * sessions to success 10.3 at k = 4, much worse token-level).
 *
 * The teacher reports only its own top list. A token outside it has at most the list's lowest
 * log-prob, so its gap is taken against that bound: an upper bound on the true gap, and exact
 * once clipped at −C, the usual case for a token the hint rules out. `teacherLogprob` stays null
 * for such tokens (it was not reported); with no list at the position the gap is null too.
 */
export function buildSupportSet(
  studentTop: readonly (readonly TokenLogprob[])[],
  teacherTop: readonly (readonly TokenLogprob[])[],
  k: number,
): SupportToken[][] {
  return studentTop.map((position, index) => {
    const reported = teacherTop[index] ?? [];
    const teacher = new Map(reported.map((token) => [token.id, token.logprob]));
    const lowestReported = reported.length === 0 ? null : Math.min(...reported.map((token) => token.logprob));
    const support = topIds(position, k);
    const highest = Math.max(...support.map((token) => token.logprob));
    const normalizer = support.reduce((sum, token) => sum + Math.exp(token.logprob - highest), 0);
    return support.map((token) => {
      const teacherLogprob = teacher.get(token.id) ?? null;
      const bound = teacherLogprob ?? lowestReported;
      return {
        id: token.id,
        studentLogprob: token.logprob,
        teacherLogprob,
        gap: bound === null ? null : bound - token.logprob,
        weight: Math.exp(token.logprob - highest) / normalizer,
      };
    });
  });
}

/**
 * Σ_i |top-k student(i) ∩ top-k teacher(i)|: how much the hint-conditioned teacher agrees with the
 * student on what is likely, the score of OpenClaw-RL v2's overlap-guided hint selection.
 */
export function topKOverlap(
  studentTop: readonly (readonly TokenLogprob[])[],
  teacherTop: readonly (readonly TokenLogprob[])[],
  k: number,
): number {
  let overlap = 0;
  const positions = Math.min(studentTop.length, teacherTop.length);
  for (let index = 0; index < positions; index += 1) {
    const student = new Set(topIds(studentTop[index] as TokenLogprob[], k).map((token) => token.id));
    for (const token of topIds(teacherTop[index] as TokenLogprob[], k)) if (student.has(token.id)) overlap += 1;
  }
  return overlap;
}

/** Problems that make any sample of the turn meaningless. */
function responseProblem(input: SampleInput): string | null {
  if (input.responseTokenIds.length === 0) return 'empty-response';
  if (input.rolloutLogprobs.length !== input.responseTokenIds.length) return 'logprobs-length-mismatch';
  return null;
}

/** The teacher's log-probs when usable, else why not. */
function teacherOf(input: SampleInput): { logprobs: readonly number[] } | { problem: string } {
  if (input.hint === null) return { problem: 'no-hint' };
  if (input.teacher === null) return { problem: 'no-teacher' };
  if ('unavailable' in input.teacher) return { problem: input.teacher.unavailable };
  if (input.teacher.logprobs.length !== input.responseTokenIds.length) return { problem: 'teacher-length-mismatch' };
  if (input.teacher.logprobs.some((value) => Number.isNaN(value))) return { problem: 'teacher-not-a-number' };
  return input.teacher;
}

function supportOf(input: SampleInput): SupportToken[][] | null {
  const k = input.supportTopK ?? 0;
  if (k <= 0 || input.studentTop === undefined || input.teacher === null || 'unavailable' in input.teacher) return null;
  const teacherTop = input.teacher.top;
  if (teacherTop === undefined || input.studentTop.length !== input.responseTokenIds.length) return null;
  return buildSupportSet(input.studentTop, teacherTop, k);
}

function ones(length: number): number[] {
  return new Array<number>(length).fill(1);
}

export const buildRlSample: SampleBuilder = (input) => {
  const problem = responseProblem(input);
  if (problem !== null) return { status: 'dropped', reason: problem };
  if (input.score === null) return { status: 'dropped', reason: 'no-score' };
  return { status: 'ready', lossMask: ones(input.responseTokenIds.length), distillationGaps: null, teacherLogprobs: null, support: null };
};

export const buildOpdSample: SampleBuilder = (input) => {
  const problem = responseProblem(input);
  if (problem !== null) return { status: 'dropped', reason: problem };
  const teacher = teacherOf(input);
  if ('problem' in teacher) return { status: 'dropped', reason: teacher.problem };
  return {
    status: 'ready',
    lossMask: ones(input.responseTokenIds.length),
    distillationGaps: distillationGapsOf(teacher.logprobs, input.rolloutLogprobs),
    teacherLogprobs: [...teacher.logprobs],
    support: supportOf(input),
  };
};

export const buildCombineSample: SampleBuilder = (input) => {
  const problem = responseProblem(input);
  if (problem !== null) return { status: 'dropped', reason: problem };
  const teacher = teacherOf(input);
  if ('problem' in teacher) {
    if (input.score === null) return { status: 'dropped', reason: `no-signal (${teacher.problem}, no score)` };
    return { status: 'ready', lossMask: ones(input.responseTokenIds.length), distillationGaps: null, teacherLogprobs: null, support: null };
  }
  return {
    status: 'ready',
    lossMask: ones(input.responseTokenIds.length),
    distillationGaps: distillationGapsOf(teacher.logprobs, input.rolloutLogprobs),
    teacherLogprobs: [...teacher.logprobs],
    support: supportOf(input),
  };
};

export const sampleBuilders: { readonly [M in SampleMethod]: SampleBuilder } = {
  rl: buildRlSample,
  opd: buildOpdSample,
  combine: buildCombineSample,
};

/** Whether a method uses hints and teacher log-probs. */
export function methodUsesHints(method: SampleMethod): boolean {
  return method !== 'rl';
}
