/**
 * How a manager appraises a worker's result: with the environment's verifier on the evidence
 * (the default; pure, so any manager gives the same reward), or with an LLM judge that reads the
 * task's opening messages, the worker's final message and the evidence. Either way the task is
 * the manager's own copy, never the worker's, and the worker's own reward is never read.
 *
 * The appraisal is a reward, posted as it is (the verifier's outcome reward, 0..1 for the built-in
 * environments; the judge's majority, −1..1): what it is measured against is the trainer's rule
 * (the recipe's `rewardBaseline`, docs/environments.md), not the manager's.
 */
import type { EnvironmentDefinition, EnvironmentTask } from '../../spec/environment.js';
import type { Judge } from '../../spec/judge.js';
import type { ResultMessage } from './rollout-queue-api.js';

export interface Appraisal {
  /** The reward the turn's sample trains on: the verifier's outcome reward, or the judge's score. */
  reward: number;
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

export function createVerifierAppraiser(environment: EnvironmentDefinition): AppraiseResult {
  return async (task, result) => {
    const verdict = environment.verify(task, result.outcome);
    return { reward: verdict.reward, text: `The checker's verdict: ${verdict.detail}.`, appraiser: 'verifier', correct: verdict.correct, outcomeReward: verdict.reward };
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
    return { reward: judged.score, text: null, appraiser: judge.judgeId, correct: null, outcomeReward: null };
  };
}
