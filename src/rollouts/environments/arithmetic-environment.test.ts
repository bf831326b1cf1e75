import { describe, expect, it } from 'vitest';
import { arithmeticEnvironment } from './arithmetic-environment.js';
import { describeEnvironmentContract } from './environment.contract.js';
import { wordProblemOf } from './word-problem-tasks.js';

describeEnvironmentContract({
  definition: arithmeticEnvironment,
  solve: (task) => ({ role: 'assistant', content: `Working it out. So the answer is ${wordProblemOf(task).answer}.` }),
  fail: (task) => ({ role: 'assistant', content: `The answer is ${wordProblemOf(task).answer + 1}.` }),
});

describe('arithmetic verifier', () => {
  const [task] = arithmeticEnvironment.taskSource.tasks({ split: 'test', count: 1 });
  if (task === undefined) throw new Error('no task');
  const answer = wordProblemOf(task).answer;

  it('reads the stated answer, not a later check', () => {
    expect(arithmeticEnvironment.verify(task, { answer })).toMatchObject({ reward: 1, correct: true });
    expect(arithmeticEnvironment.verify(task, { answer: answer + 2 })).toMatchObject({ reward: 0, correct: false });
  });

  it('gives no reward without an answer', () => {
    expect(arithmeticEnvironment.verify(task, { answer: null })).toEqual({ reward: 0, correct: false, detail: `expected ${answer}, found no answer` });
    expect(arithmeticEnvironment.verify(task, {})).toMatchObject({ reward: 0 });
  });

  it('draws held-out questions from the corpus names never used in training', () => {
    const test = arithmeticEnvironment.taskSource.tasks({ split: 'test', count: 200 });
    const train = new Set(arithmeticEnvironment.taskSource.tasks({ split: 'train', count: 2000 }).map((entry) => entry.data.question));
    expect(test.filter((entry) => train.has(entry.data.question))).toEqual([]);
  });
});
