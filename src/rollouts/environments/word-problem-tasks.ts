/**
 * Tasks from the built-in corpus generator's word problems, shared by `arithmetic` and
 * `tool-calc`. The `test` split draws from the corpus's held-out split, whose names never occur in
 * training problems (`builtin/corpus/word-problems.ts`), so a held-out question is never trained
 * on; within a split, task i of a seed depends only on (environment, seed, split, i).
 */
import { createSeededRandom, deriveSeed } from '../../core/seeded-random.js';
import { generateWordProblem } from './word-problems.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { EnvironmentTask, TaskSource } from '../../spec/environment.js';

export interface WordProblemTaskData {
  question: string;
  answer: number;
  [key: string]: unknown;
}

export function createWordProblemTaskSource(environment: string): TaskSource {
  return {
    tasks({ split, count, seed = 0, offset = 0 }) {
      return Array.from({ length: count }, (_, index) => {
        const position = offset + index;
        const random = createSeededRandom(deriveSeed(seed, environment, split, position));
        const problem = generateWordProblem(random, split === 'train' ? 'train' : 'heldout');
        const data: WordProblemTaskData = { question: problem.question, answer: problem.answer };
        return { id: `${environment}-${split}-${seed}-${position}`, split, data };
      });
    },
  };
}

/** The task's question and answer, checked: tasks cross the bus, so their data is untrusted JSON. */
export function wordProblemOf(task: EnvironmentTask): WordProblemTaskData {
  const { question, answer } = task.data;
  if (typeof question !== 'string' || typeof answer !== 'number') {
    throw new ClawrlError('invalid_request', `Task ${task.id} is not a word problem (needs data.question and data.answer).`, { param: 'task' });
  }
  return { question, answer };
}
