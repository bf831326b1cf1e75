/**
 * How a manager appraises a worker's result: with the environment's verifier on the evidence
 * (the default; pure, so any manager gives the same score), or with an LLM judge that reads the
 * task's opening messages, the worker's final message and the evidence. Either way the task is
 * the manager's own copy, never the worker's, and the worker's own reward is never read.
 *
 * Feedback scores are in [−1, 1] while outcome rewards are in [0, 1] for the built-in
 * environments, so a verdict becomes `2·reward − 1` (solved +1, failed −1), clamped.
 */
import type { EnvironmentDefinition, EnvironmentTask } from '../../spec/environment.js';
import type { Judge } from '../../spec/judge.js';
import type { ResultMessage } from './rollout-queue-api.js';

export interface Appraisal {
  /** The feedback score, in [−1, 1]. */
  score: number;
  /** The feedback text, which the gateway's judge reads as what came after the last turn; null: none. */
  text: string | null;
  /** `verifier`, or the judge's id. */
  appraiser: string;
  /** The verifier's verdict; null for a judge. */
  correct: boolean | null;
  /** The verifier's outcome reward; null for a judge. */
  outcomeReward: number | null;
}

/** Null when the appraiser could not decide (no readable judge vote): the result is tried again later. */
export type AppraiseResult = (task: EnvironmentTask, result: ResultMessage, signal: AbortSignal) => Promise<Appraisal | null>;

export function scoreOfReward(reward: number): number {
  return Math.max(-1, Math.min(1, 2 * reward - 1));
}

export function createVerifierAppraiser(environment: EnvironmentDefinition): AppraiseResult {
  return async (task, result) => {
    const verdict = environment.verify(task, result.outcome);
    return { score: scoreOfReward(verdict.reward), text: `The checker's verdict: ${verdict.detail}.`, appraiser: 'verifier', correct: verdict.correct, outcomeReward: verdict.reward };
  };
}

export function createJudgeAppraiser(environment: EnvironmentDefinition, judge: Judge): AppraiseResult {
  return async (task, result, signal) => {
    const world = await environment.create(task);
    let opening;
    try {
      opening = await world.initialObservation();
    } finally {
      await world.close();
    }
    const judged = await judge.judge(
      {
        context: opening.messages,
        response: { role: 'assistant', content: result.transcript.finalMessage },
        nextState: [{ role: 'user', content: `The environment reported this outcome: ${JSON.stringify(result.outcome)}` }],
        wantHint: false,
      },
      signal,
    );
    if (judged.score === null) return null;
    return { score: judged.score, text: null, appraiser: judge.judgeId, correct: null, outcomeReward: null };
  };
}
