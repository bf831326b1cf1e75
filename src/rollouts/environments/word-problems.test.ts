import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../core/seeded-random.js';
import { generateWordProblem, heldoutNames, templateIds, trainNames } from './word-problems.js';

/** Evaluates `a op b = c` equations in a working line and returns whether each holds. */
function equationsHold(work: string): boolean {
  return work.split(', ').every((equation) => {
    const match = /^(\d+) ([-+x/]) (\d+) = (\d+)$/.exec(equation);
    if (match === null) return false;
    const [, left, operator, right, result] = match;
    const a = Number(left);
    const b = Number(right);
    const value = operator === '+' ? a + b : operator === '-' ? a - b : operator === 'x' ? a * b : a / b;
    return value === Number(result);
  });
}

describe('generateWordProblem', () => {
  const random = createSeededRandom(4);
  const problems = Array.from({ length: 3000 }, () => generateWordProblem(random, 'train'));

  it('uses every template and solves each problem correctly', () => {
    expect(new Set(problems.map((problem) => problem.templateId))).toEqual(new Set(templateIds));
    for (const problem of problems) {
      expect(equationsHold(problem.work), problem.work).toBe(true);
      expect(problem.work.endsWith(`= ${problem.answer}`)).toBe(true);
      expect(problem.answer).toBeGreaterThan(0);
      expect(problem.question).toContain(problem.name);
      expect(problem.steps.length).toBeGreaterThanOrEqual(2);
      for (const sentence of problem.answerSentences) expect(sentence).toContain(String(problem.answer));
    }
  });

  it('offers only mistakes that are really wrong', () => {
    for (const problem of problems) {
      expect(problem.mistakes.length).toBeGreaterThanOrEqual(1);
      for (const mistake of problem.mistakes) {
        expect(mistake.value).not.toBe(problem.answer);
        expect(mistake.work.endsWith(`= ${mistake.value}`)).toBe(true);
        if (mistake.kind === 'operation') expect(equationsHold(mistake.work)).toBe(true);
        else expect(equationsHold(mistake.work)).toBe(false);
      }
    }
  });

  it('marks a key value in every step', () => {
    for (const problem of problems.slice(0, 200)) {
      for (const step of problem.steps) expect(step((text) => `**${text}**`)).toMatch(/\*\*[^*]+\*\*/);
    }
  });

  it('keeps the train and held-out names disjoint', () => {
    expect(trainNames.filter((name) => heldoutNames.includes(name))).toEqual([]);
    const heldout = createSeededRandom(4);
    for (let index = 0; index < 500; index += 1) {
      expect(heldoutNames).toContain(generateWordProblem(heldout, 'heldout').name);
    }
  });
});
