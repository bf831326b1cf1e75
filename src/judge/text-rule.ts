/**
 * Declarative predicates over a text, the rules of `--judge rules` (and of the simulated users'
 * preferences): a `regex` that must or must not match, a word count at most or at least
 * `value`, or the `equations` the text writes down (`written-equations.ts`): `correct` holds when
 * it writes at least one and all are right, `wrong` when at least one is wrong; a text without
 * any holds neither. Words are whitespace-separated tokens.
 *
 * A regex rule may carry `flags` (any of `i`, `m`, `s`, `u`), because JavaScript has no inline
 * flags and a rule such as "contains a warm phrase" must match case-insensitively.
 */
import { z } from 'zod';
import { writtenEquations } from '../core/written-equations.js';

function regexProblem(pattern: string, flags: string): string | null {
  try {
    new RegExp(pattern, flags);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export const regexRuleSchema = z
  .object({
    type: z.literal('regex'),
    pattern: z.string().min(1),
    flags: z.string().regex(/^[imsu]*$/, 'flags may only contain i, m, s, u').optional(),
    expect: z.boolean(),
  })
  .superRefine((rule, context) => {
    const problem = regexProblem(rule.pattern, rule.flags ?? '');
    if (problem !== null) context.addIssue({ code: 'custom', path: ['pattern'], message: `invalid regex: ${problem}` });
  });

export const wordCountRuleSchema = z.object({
  type: z.enum(['maxWords', 'minWords']),
  value: z.number().int().nonnegative(),
});

export const equationsRuleSchema = z.object({
  type: z.literal('equations'),
  expect: z.enum(['correct', 'wrong']),
});

export const textRuleSchema = z.union([regexRuleSchema, wordCountRuleSchema, equationsRuleSchema]);

export type TextRule = z.infer<typeof textRuleSchema>;

export function countWords(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

export function ruleHolds(rule: TextRule, text: string): boolean {
  switch (rule.type) {
    case 'regex':
      return new RegExp(rule.pattern, rule.flags ?? '').test(text) === rule.expect;
    case 'maxWords':
      return countWords(text) <= rule.value;
    case 'minWords':
      return countWords(text) >= rule.value;
    case 'equations': {
      const equations = writtenEquations(text);
      return rule.expect === 'correct' ? equations.length > 0 && equations.every((equation) => equation.correct) : equations.some((equation) => !equation.correct);
    }
  }
}
