import { describe, expect, it } from 'vitest';
import { arithmeticEnvironment } from '../environments/arithmetic-environment.js';
import type { EnvironmentTask } from '../../spec/environment.js';
import type { Judge, JudgeInput } from '../../spec/judge.js';
import type { JudgeScore } from '../../spec/records.js';
import { createJudgeAppraiser, createVerifierAppraiser } from './appraise-result.js';
import type { ResultMessage } from './rollout-queue-api.js';

const task = arithmeticEnvironment.taskSource.tasks({ split: 'test', count: 1, seed: 3 })[0] as EnvironmentTask;
const answer = Number(task.data['answer']);

function resultWith(outcome: Record<string, unknown>): ResultMessage {
  return {
    run: 'r',
    environment: 'arithmetic',
    task,
    sessionId: 's',
    turnIds: ['t'],
    outcome,
    transcript: { turns: 1, toolCalls: 0, finalMessage: `So the answer is ${String(outcome['answer'])}.`, finish: 'done' },
    worker: 'w',
  };
}

function judgeScoring(score: JudgeScore | null, seen: JudgeInput[]): Judge {
  return {
    judgeId: 'rules',
    judgeModel: 'rules',
    promptVersion: 'test',
    async judge(input) {
      seen.push(input);
      return { score, votes: [], hint: null, hintCandidates: [], judgeModel: 'rules', promptVersion: 'test', latencyMs: 0 };
    },
  };
}

describe('appraising a result', () => {
  it("rewards with the environment's verifier, its outcome reward as it is, and says what it found", async () => {
    const appraise = createVerifierAppraiser(arithmeticEnvironment);
    const signal = new AbortController().signal;
    expect(await appraise(task, resultWith({ answer }), signal)).toMatchObject({ reward: 1, correct: true, outcomeReward: 1, appraiser: 'verifier' });
    const wrong = await appraise(task, resultWith({ answer: answer + 1 }), signal);
    expect(wrong).toMatchObject({ reward: 0, correct: false, outcomeReward: 0 });
    expect(wrong?.text).toContain(`expected ${answer}, found ${answer + 1}`);
  });

  it("lets a judge read the task's opening, the final message and the outcome; no readable vote is no appraisal", async () => {
    const seen: JudgeInput[] = [];
    const signal = new AbortController().signal;
    const appraisal = await createJudgeAppraiser(arithmeticEnvironment, judgeScoring(1, seen))(task, resultWith({ answer }), signal);
    expect(appraisal).toEqual({ reward: 1, text: null, appraiser: 'rules', correct: null, outcomeReward: null });
    expect(seen[0]?.context[0]?.content).toContain(String(task.data['question']));
    expect(seen[0]?.response).toEqual({ role: 'assistant', content: `So the answer is ${answer}.` });
    expect(seen[0]?.nextState[0]?.content).toContain(JSON.stringify({ answer }));
    expect(await createJudgeAppraiser(arithmeticEnvironment, judgeScoring(null, []))(task, resultWith({ answer }), signal)).toBeNull();
  });
});
