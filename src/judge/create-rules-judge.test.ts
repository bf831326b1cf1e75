import { describe, expect, it } from 'vitest';
import type { JudgeInput } from '../spec/judge.js';
import { createRulesJudge, defaultRulesJudgeSpec, rulesJudgeSpecSchema, type RulesJudgeSpec } from './create-rules-judge.js';
import { runJudgeContract } from './judge.contract.js';
import { ruleHolds, textRuleSchema } from './text-rule.js';

function inputOf(response: string, next: string, wantHint = true): JudgeInput {
  return {
    context: [{ role: 'user', content: 'Solve 2+3.' }],
    response: { role: 'assistant', content: response },
    nextState: [{ role: 'user', content: next }],
    wantHint,
  };
}

const signal = new AbortController().signal;

const noBoldHint = "Please don't use bold text.";
/** A preference read off the response: +1 without bold text, −1 with a hint otherwise. */
function noBoldSpec(name = 'no-bold'): RulesJudgeSpec {
  return {
    name,
    rules: [
      { when: [{ on: 'response', rule: { type: 'regex', pattern: '\\*\\*[^*\\n]+\\*\\*', expect: false } }], score: 1 },
      { when: [], score: -1, hint: noBoldHint },
    ],
  };
}

describe('createRulesJudge', () => {
  it('scores a preference on the response, with its hint when it is broken', async () => {
    const judge = createRulesJudge(noBoldSpec(), () => 0);
    const plain = await judge.judge(inputOf('Two plus three makes five.', 'whatever'), signal);
    expect(plain).toMatchObject({ score: 1, hint: null, hintCandidates: [] });
    const bold = await judge.judge(inputOf('The answer is **5**.', 'whatever'), signal);
    expect(bold).toMatchObject({ score: -1, hint: noBoldHint, hintCandidates: [noBoldHint] });
    expect(bold.votes.map((vote) => [vote.kind, vote.score])).toEqual([
      ['verdict', -1],
      ['hint', 1],
    ]);
    const withoutHints = await judge.judge(inputOf('The answer is **5**.', 'whatever', false), signal);
    expect(withoutHints).toMatchObject({ score: -1, hint: null });
    expect(withoutHints.votes).toHaveLength(1);
    expect(judge.judgeModel).toBe('rules:no-bold');
  });

  it('reads corrections before thanks in the next state with the default rules, and 0 when nothing matches', async () => {
    const judge = createRulesJudge(defaultRulesJudgeSpec);
    expect((await judge.judge(inputOf('5', 'Thanks!'), signal)).score).toBe(1);
    expect((await judge.judge(inputOf('5', 'Thanks, but that is wrong'), signal)).score).toBe(-1);
    expect((await judge.judge(inputOf('5', 'What about 7 + 8?'), signal)).score).toBe(0);
  });

  it('versions its rules: different rules give a different prompt version', () => {
    const first = createRulesJudge(noBoldSpec());
    const second = createRulesJudge({ ...noBoldSpec(), rules: [{ when: [{ on: 'response', rule: { type: 'minWords', value: 100 } }], score: 1 }] });
    expect(first.promptVersion).toMatch(/^rules-[0-9a-f]{12}$/);
    expect(first.promptVersion).not.toBe(second.promptVersion);
    expect(createRulesJudge(noBoldSpec()).promptVersion).toBe(first.promptVersion);
  });

  it('reads word counts and case-insensitive regexes', () => {
    expect(ruleHolds({ type: 'maxWords', value: 3 }, ' one two\nthree ')).toBe(true);
    expect(ruleHolds({ type: 'minWords', value: 4 }, 'one two three')).toBe(false);
    expect(ruleHolds({ type: 'regex', pattern: 'well done', flags: 'i', expect: true }, 'Well Done!')).toBe(true);
    expect(textRuleSchema.safeParse({ type: 'regex', pattern: '(', expect: true }).success).toBe(false);
  });

  it('checks the calculations a text writes down: all correct, some wrong, or none to check', () => {
    const correct = { type: 'equations', expect: 'correct' } as const;
    const wrong = { type: 'equations', expect: 'wrong' } as const;
    const right = 'Adding them gives 12 + 5 = 17, and 17 - 3 = 14.';
    const slip = 'Adding them gives 12 + 5 = 17, and 17 - 3 = 15.';
    expect([ruleHolds(correct, right), ruleHolds(wrong, right)]).toEqual([true, false]);
    expect([ruleHolds(correct, slip), ruleHolds(wrong, slip)]).toEqual([false, true]);
    expect([ruleHolds(correct, 'The answer is 14.'), ruleHolds(wrong, 'The answer is 14.')]).toEqual([false, false]);
    expect(textRuleSchema.safeParse({ type: 'equations', expect: 'maybe' }).success).toBe(false);
  });

  it('rejects specs with short hints or no rules', () => {
    expect(rulesJudgeSpecSchema.safeParse({ name: 'x', rules: [] }).success).toBe(false);
    expect(rulesJudgeSpecSchema.safeParse({ name: 'x', rules: [{ when: [], score: 1, hint: 'short' }] }).success).toBe(false);
  });
});

// A catch-all rule reads every turn as the plan says; rules always read, so no vote is unreadable.
runJudgeContract({
  name: 'rules judge',
  createJudge: (plan) => {
    if (plan.verdict === 'unreadable') throw new Error('a rules judge always reads its rules');
    return createRulesJudge({ name: 'contract', rules: [{ when: [], score: plan.verdict, ...(plan.hint === null ? {} : { hint: plan.hint }) }] });
  },
  canBeUnreadable: false,
});
