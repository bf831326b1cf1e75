import { describe, expect, it } from 'vitest';
import { calculateExpression, maximumExpressionLength } from './calculate-expression.js';

describe('calculateExpression', () => {
  it('computes with the usual precedence and parentheses', () => {
    expect(calculateExpression('12 + 7 * 3')).toEqual({ ok: true, value: 33 });
    expect(calculateExpression('(12 + 7) * 3')).toEqual({ ok: true, value: 57 });
    expect(calculateExpression('-4 + 10 / 4')).toEqual({ ok: true, value: -1.5 });
    expect(calculateExpression('17 % 5')).toEqual({ ok: true, value: 2 });
    expect(calculateExpression('0.1 + 0.2')).toEqual({ ok: true, value: 0.3 });
    expect(calculateExpression('6 × 7')).toEqual({ ok: true, value: 42 });
    expect(calculateExpression('3 x 4')).toEqual({ ok: true, value: 12 });
  });

  it('returns errors as values, never runs code', () => {
    expect(calculateExpression('1 / 0')).toEqual({ ok: false, error: 'division by zero' });
    expect(calculateExpression('process.exit(1)').ok).toBe(false);
    expect(calculateExpression('2 +')).toEqual({ ok: false, error: 'unexpected end of expression' });
    expect(calculateExpression('(1 + 2')).toMatchObject({ ok: false });
    expect(calculateExpression('1'.repeat(maximumExpressionLength + 1))).toMatchObject({ ok: false });
    expect(calculateExpression(`${'('.repeat(40)}1${')'.repeat(40)}`)).toEqual({ ok: false, error: 'expression nested too deeply' });
  });
});
