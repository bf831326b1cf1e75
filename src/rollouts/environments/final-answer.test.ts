import { describe, expect, it } from 'vitest';
import { finalNumericAnswer, finalTextAnswer } from './final-answer.js';

describe('finalNumericAnswer', () => {
  it('prefers a boxed answer, then a stated one, then the last number', () => {
    expect(finalNumericAnswer('12 + 7 = 19. So the answer is \\boxed{19}. Check: 19 - 7 = 12')).toBe(19);
    expect(finalNumericAnswer('The difference is 12 - 7 = **5**. The answer is **5**. To check, 7 + 5 = 12.')).toBe(5);
    expect(finalNumericAnswer('Answer: 21')).toBe(21);
    expect(finalNumericAnswer('Subtracting gives 30 - 8 = 22')).toBe(22);
    expect(finalNumericAnswer('It is 1,250 in all')).toBe(1250);
    expect(finalNumericAnswer('no idea')).toBeNull();
  });
});

describe('finalTextAnswer', () => {
  it('reads the last line without emphasis or the answer lead', () => {
    expect(finalTextAnswer('I looked.\nThe answer is **notes.txt**.')).toBe('notes.txt');
    expect(finalTextAnswer('\\boxed{b.txt}')).toBe('b.txt');
    expect(finalTextAnswer('   ')).toBeNull();
  });
});
