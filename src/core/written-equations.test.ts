import { describe, expect, it } from 'vitest';
import { writtenEquations } from './written-equations.js';

describe('writtenEquations', () => {
  it('finds each written calculation and checks it', () => {
    const equations = writtenEquations('Adding them gives 12 + 5 = 17. Then 17 - 3 = 15, so the answer is 15.');
    expect(equations.map(({ text, stated, computed, correct }) => [text, stated, computed, correct])).toEqual([
      ['12 + 5 = 17', 17, 17, true],
      ['17 - 3 = 15', 15, 14, false],
    ]);
  });

  it('reads the operators models write, with precedence, and chains as separate calculations', () => {
    expect(writtenEquations('3 × 4 = 12, 12 ÷ 2 = 6, 2x3=6, 7 − 2 = 5').map((equation) => equation.correct)).toEqual([true, true, true, true]);
    expect(writtenEquations('2 + 3 * 4 = 20')).toMatchObject([{ computed: 14, correct: false }]);
    expect(writtenEquations('12 + 5 = 17, 17 - 3 = 14').map((equation) => equation.text)).toEqual(['12 + 5 = 17', '17 - 3 = 14']);
  });

  it('accepts a result rounded to the places it is written with', () => {
    expect(writtenEquations('10 / 3 = 3.33')).toMatchObject([{ correct: true }]);
    expect(writtenEquations('10 / 3 = 3.4')).toMatchObject([{ correct: false }]);
  });

  it('ignores what is not a calculation: a lone number, a variable, a signed start, a division by zero', () => {
    expect(writtenEquations('x = 5, the answer = 17, 17 = 17')).toEqual([]);
    expect(writtenEquations('-3 + 5 = 2')).toEqual([]);
    expect(writtenEquations('5 / 0 = 1')).toEqual([]);
    expect(writtenEquations('')).toEqual([]);
  });
});
