/**
 * `arithmetic`: one word problem, one reply. The verifier reads the reply's final answer
 * (`final-answer.ts`) and gives reward 1 when it equals the problem's answer, else 0.
 */
import type { EnvironmentDefinition, EnvironmentTask, Verdict } from '../../spec/environment.js';
import { finalNumericAnswer } from './final-answer.js';
import { createSingleUseGuard } from './single-use-guard.js';
import { createWordProblemTaskSource, wordProblemOf } from './word-problem-tasks.js';

/** The built-in model learned this phrasing in its `solve` task; the instruction asks for a checkable answer. */
export function wordProblemPrompt(question: string): string {
  return `Solve this word problem. ${question}`;
}

export function verifyNumericAnswer(task: EnvironmentTask, answer: unknown): Verdict {
  const expected = wordProblemOf(task).answer;
  if (typeof answer !== 'number') return { reward: 0, correct: false, detail: `expected ${expected}, found no answer` };
  const correct = answer === expected;
  return { reward: correct ? 1 : 0, correct, detail: `expected ${expected}, found ${answer}` };
}

export const arithmeticEnvironment: EnvironmentDefinition = {
  name: 'arithmetic',
  description: 'word problems from the built-in corpus; the final answer is checked, reward 1 or 0',
  maxTurns: 1,
  taskSource: createWordProblemTaskSource('arithmetic'),
  async create(task) {
    const { question } = wordProblemOf(task);
    const guard = createSingleUseGuard('arithmetic');
    return {
      async initialObservation() {
        guard.observe();
        return { messages: [{ role: 'user', content: wordProblemPrompt(question) }], tools: [] };
      },
      async step(action) {
        guard.act();
        guard.finish();
        const outcome = { answer: finalNumericAnswer(action.content) };
        return { observation: [], done: true, outcome, verdict: arithmeticEnvironment.verify(task, outcome) };
      },
      async close() {},
    };
  },
  verify(task, outcome) {
    return verifyNumericAnswer(task, outcome.answer);
  },
};
