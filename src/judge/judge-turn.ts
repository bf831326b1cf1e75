/**
 * What the judge worker does with one claimed turn: judge it (unless this judge already did),
 * choose the hint, ask the engine for the teacher's log-probs, build the sample for the method
 * and record both. A sample holds what was measured (the reward, the teacher's gaps), not an
 * advantage: the trainer forms those (`core/rl/advantages.ts`), so the judge has no weights to know. Expected outcomes (no next state, no hint, an engine without scoring, a
 * hint-augmented prompt longer than the model's context) end in a
 * dropped sample with a reason; infrastructure failures throw, and the worker retries the turn.
 *
 * Reward: the latest feedback's overrides the judge's (`turnRewardOf`: a rollout's posted reward,
 * unbounded, else a score in −1..1), and a rollout's feedback places the sample in its group. Hint: the feedback's hint wins; else
 * the judge's candidates are ranked by top-k overlap between the student and the hint-conditioned
 * teacher when the engine reports top-k, else the longest wins. Feedback text joins the judge's
 * next state (it is what the user said about the reply), and a turn without a next state is judged
 * from feedback alone.
 */
import { appendHint } from '../core/hint.js';
import { selectHint, type SelectedHint } from '../core/judge-votes.js';
import { logprobTemperatureOf } from '../core/logprob-temperature.js';
import { methodUsesHints, sampleBuilders, sampleGroupOf, topKOverlap, turnRewardOf, type TeacherScores } from '../core/rl/build-samples.js';
import { inSessionCohort } from '../core/session-cohort.js';
import type { ChatMessage } from '../spec/chat.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine, ScoreResult, TokenLogprob } from '../spec/inference-engine.js';
import type { Judge } from '../spec/judge.js';
import type { JudgingQueue } from '../spec/judging-queue.js';
import type { FeedbackRecord, JudgeClaim, JudgementRecord, SampleMethod, TurnRecord } from '../spec/records.js';
import { rememberJudgedHint, teacherMessagesOf, type JudgeMemory } from './judge-memory.js';

export interface JudgeTurnDependencies {
  store: Pick<JudgingQueue, 'recordJudgement' | 'recordSample'>;
  judge: Judge;
  method: SampleMethod;
  engine: InferenceEngine | undefined;
  /** k of the overlap-guided hint selection (4). */
  overlapTopK: number;
  /** k of the optional support set; 0 builds none. */
  supportTopK: number;
  /** The share of sessions the replay gate holds out of training (`core/session-cohort.ts`); default 0. */
  heldOutShare?: number;
  /**
   * Score the OPD teacher under the version that sampled the turn rather than the served one: with
   * per-user policies (`--policy-scope user`) the served version is the global lineage's, while a
   * user's turn was sampled by that user's (the gap Δ subtracts that version's log-probs).
   */
  teacherUnderTurnVersion?: boolean;
  now: () => number;
  createId: (prefix: string) => string;
  /** Each user's memory (`--user-memory`): filled with accepted hints, and the teacher's context with `teacher` or `both`. */
  memory?: JudgeMemory;
}

/** The next state the judge sees: what followed the reply, then the feedback's text. */
export function judgedNextState(turn: TurnRecord, feedback: FeedbackRecord | null): ChatMessage[] {
  const text = feedback?.text ?? null;
  return [...(turn.nextState ?? []), ...(text === null || text.trim() === '' ? [] : [{ role: 'user' as const, content: text }])];
}

/** This judge's earlier judgement of the turn, unless feedback text arrived after it. */
function reusableJudgement(claim: JudgeClaim, judge: Judge): JudgementRecord | null {
  const earlier = claim.judgements.findLast(
    (judgement) =>
      judgement.judge === judge.judgeId && judgement.judgeModel === judge.judgeModel && judgement.promptVersion === judge.promptVersion,
  );
  if (earlier === undefined) return null;
  const feedback = claim.feedback;
  if (feedback?.text != null && feedback.createdAt > earlier.createdAt) return null;
  return earlier;
}

class TeacherScorer {
  readonly #cache = new Map<string, ScoreResult | null>();
  #student: ScoreResult | undefined;

  constructor(
    private readonly engine: InferenceEngine | undefined,
    private readonly turn: TurnRecord,
    /** What the teacher reads before the hint: the turn's messages, with the user's memory when it teaches (`judge-memory.ts`). */
    private readonly teacherMessages: ChatMessage[],
    private readonly topK: number,
    private readonly signal: AbortSignal,
    private readonly underTurnVersion: boolean,
  ) {}

  get available(): boolean {
    return this.engine !== undefined && this.engine.capabilities.scoring;
  }

  /**
   * Null when the hint-augmented prompt does not fit the model: a prompt that just fit when the
   * turn was sampled can overflow by the hint's length. That is an outcome of the turn, not a
   * failure to retry (retried, it overflows every time and the turn never leaves the queue).
   */
  async teacher(hint: string): Promise<ScoreResult | null> {
    if (this.#cache.has(hint)) return this.#cache.get(hint) ?? null;
    let result: ScoreResult | null;
    try {
      result = await this.#score({ messages: appendHint(this.teacherMessages, hint), tools: this.turn.tools });
    } catch (error) {
      if (!(ClawrlError.isInstance(error) && error.code === 'context_length_exceeded')) throw error;
      result = null;
    }
    this.#cache.set(hint, result);
    return result;
  }

  /** The student's view: the turn's own prompt ids, scored by the served policy. */
  async student(): Promise<ScoreResult> {
    this.#student ??= await this.#score({ tokenIds: this.turn.promptTokenIds });
    return this.#student;
  }

  async #score(prompt: { messages: ChatMessage[]; tools: TurnRecord['tools'] } | { tokenIds: number[] }): Promise<ScoreResult> {
    if (this.engine === undefined) throw new RangeError('no engine to score with');
    // Under the distribution the reply was sampled from: the trainer's OPD gap subtracts the
    // rollout's log-probs (taken at the sampling temperature) from these.
    const temperature = logprobTemperatureOf(this.turn.sampling);
    return this.engine.score(
      {
        prompt, responseTokenIds: this.turn.responseTokenIds, temperature, ...(this.topK > 0 ? { topK: this.topK } : {}),
        ...(this.underTurnVersion ? { policyVersion: this.turn.policyVersion } : {}),
      },
      this.signal,
    );
  }
}

async function chooseHint(candidates: string[], scorer: TeacherScorer, k: number): Promise<SelectedHint | null> {
  if (candidates.length < 2 || !scorer.available || k <= 0) return selectHint(candidates);
  const studentTop = (await scorer.student()).top;
  if (studentTop === undefined) return selectHint(candidates);
  const overlaps: number[] = [];
  for (const candidate of candidates) {
    const teacherTop = (await scorer.teacher(candidate))?.top;
    overlaps.push(teacherTop === undefined ? Number.NaN : topKOverlap(studentTop, teacherTop, k));
  }
  return selectHint(candidates, overlaps);
}

/**
 * How long a top list each scoring asks for. The support set needs the teacher's log-prob of the
 * student's top k, which the teacher reports only when they are in its own list: a list of 20
 * covers them nearly always, and a token outside it is taken at the list's bound
 * (`buildSupportSet`).
 */
function scoredTopK(dependencies: Pick<JudgeTurnDependencies, 'overlapTopK' | 'supportTopK'>): number {
  return Math.max(dependencies.overlapTopK, dependencies.supportTopK > 0 ? Math.max(20, dependencies.supportTopK) : 0);
}

export async function judgeTurn(claim: JudgeClaim, dependencies: JudgeTurnDependencies, signal: AbortSignal): Promise<void> {
  const { store, judge, method } = dependencies;
  const { turn, feedback } = claim;
  const wantHint = methodUsesHints(method);
  const teacherMessages = wantHint ? await teacherMessagesOf(turn, dependencies.memory) : turn.messages;
  const scorer = new TeacherScorer(dependencies.engine, turn, teacherMessages, scoredTopK(dependencies), signal, dependencies.teacherUnderTurnVersion === true);

  let judgement = reusableJudgement(claim, judge);
  const nextState = judgedNextState(turn, feedback);
  if (judgement === null && nextState.length > 0) {
    const result = await judge.judge({ context: turn.messages, response: turn.response, nextState, wantHint }, signal);
    const selected = wantHint && feedback?.hint == null ? await chooseHint(result.hintCandidates, scorer, dependencies.overlapTopK) : null;
    judgement = await store.recordJudgement({
      turnId: turn.id,
      judge: judge.judgeId,
      judgeModel: result.judgeModel,
      promptVersion: result.promptVersion,
      score: result.score,
      votes: result.votes,
      hint: selected?.hint ?? result.hint,
      hintCandidates: result.hintCandidates,
      hintSelection: selected?.method ?? (result.hint === null ? null : 'longest'),
      latencyMs: result.latencyMs,
      createdAt: dependencies.now(),
    });
    await rememberJudgedHint(turn, judgement.hint, dependencies.memory, dependencies.now());
  }

  const score = turnRewardOf(feedback, judgement?.score ?? null);
  const hint = wantHint ? (feedback?.hint ?? judgement?.hint ?? null) : null;
  let teacher: TeacherScores | null = null;
  let studentTop: readonly (readonly TokenLogprob[])[] | undefined;
  if (hint !== null) {
    if (!scorer.available) {
      teacher = { unavailable: 'engine-cannot-score' };
    } else {
      const scored = await scorer.teacher(hint);
      if (scored === null) {
        teacher = { unavailable: 'teacher-context-length-exceeded' };
      } else {
        teacher = { logprobs: scored.logprobs, ...(scored.top === undefined ? {} : { top: scored.top }) };
        if (dependencies.supportTopK > 0) studentTop = (await scorer.student()).top;
      }
    }
  }

  const built = sampleBuilders[method](
    {
      responseTokenIds: turn.responseTokenIds,
      rolloutLogprobs: turn.logprobs,
      score,
      hint,
      teacher,
      ...(studentTop === undefined ? {} : { studentTop }),
      supportTopK: dependencies.supportTopK,
    },
  );
  // The replay gate's held-out sessions are judged (the gate's rubric, the dashboard) but never trained on;
  // rollout turns are no user's and are never held out.
  const group = sampleGroupOf(feedback);
  const heldOut = group === null && inSessionCohort('held-out', turn.sessionId, dependencies.heldOutShare ?? 0);
  const ready = built.status === 'ready' && !heldOut;
  await store.recordSample({
    id: dependencies.createId('sample'),
    turnId: turn.id,
    method,
    status: ready ? 'ready' : 'dropped',
    dropReason: ready ? null : built.status === 'ready' ? 'held-out' : built.reason,
    policyVersion: turn.policyVersion,
    judgementId: judgement?.id ?? null,
    feedbackId: feedback?.id ?? null,
    score,
    group,
    hint,
    lossMask: ready ? built.lossMask : [],
    distillationGaps: ready ? built.distillationGaps : null,
    teacherLogprobs: ready ? built.teacherLogprobs : null,
    support: ready ? built.support : null,
    createdAt: dependencies.now(),
  });
}
