import { describe, expect, it } from 'vitest';
import { builtinUsers } from '../core/user-preference.js';
import type { JudgeInput } from '../spec/judge.js';
import { createRulesJudge, defaultRulesJudgeSpec, rulesJudgeSpecForUser, rulesJudgeSpecSchema } from './create-rules-judge.js';

function inputOf(response: string, next: string, wantHint = true): JudgeInput {
  return {
    context: [{ role: 'user', content: 'Solve 2+3.' }],
    response: { role: 'assistant', content: response },
    nextState: [{ role: 'user', content: next }],
    wantHint,
  };
}

const signal = new AbortController().signal;

describe('createRulesJudge', () => {
  it('scores a simulated user preference on the response, with the user hint when it is broken', async () => {
    const judge = createRulesJudge(rulesJudgeSpecForUser(builtinUsers.student), () => 0);
    const plain = await judge.judge(inputOf('Two plus three makes five.', 'whatever'), signal);
    expect(plain).toMatchObject({ score: 1, hint: null, hintCandidates: [] });
    const bold = await judge.judge(inputOf('The answer is **5**.', 'whatever'), signal);
    expect(bold).toMatchObject({ score: -1, hint: builtinUsers.student.hint, hintCandidates: [builtinUsers.student.hint] });
    expect(bold.votes.map((vote) => [vote.kind, vote.score])).toEqual([
      ['verdict', -1],
      ['hint', 1],
    ]);
    const withoutHints = await judge.judge(inputOf('The answer is **5**.', 'whatever', false), signal);
    expect(withoutHints).toMatchObject({ score: -1, hint: null });
    expect(withoutHints.votes).toHaveLength(1);
    expect(judge.judgeModel).toBe('rules:user-student');
  });

  it('reads corrections before thanks in the next state with the default rules, and 0 when nothing matches', async () => {
    const judge = createRulesJudge(defaultRulesJudgeSpec);
    expect((await judge.judge(inputOf('5', 'Thanks!'), signal)).score).toBe(1);
    expect((await judge.judge(inputOf('5', 'Thanks, but that is wrong'), signal)).score).toBe(-1);
    expect((await judge.judge(inputOf('5', 'What about 7 + 8?'), signal)).score).toBe(0);
  });

  it('versions its rules: different rules give a different prompt version', () => {
    const first = createRulesJudge(rulesJudgeSpecForUser(builtinUsers.student));
    const second = createRulesJudge(rulesJudgeSpecForUser(builtinUsers.teacher));
    expect(first.promptVersion).toMatch(/^rules-[0-9a-f]{12}$/);
    expect(first.promptVersion).not.toBe(second.promptVersion);
    expect(createRulesJudge(rulesJudgeSpecForUser(builtinUsers.student)).promptVersion).toBe(first.promptVersion);
  });

  it('rejects specs with short hints or no rules', () => {
    expect(rulesJudgeSpecSchema.safeParse({ name: 'x', rules: [] }).success).toBe(false);
    expect(rulesJudgeSpecSchema.safeParse({ name: 'x', rules: [{ when: [], score: 1, hint: 'short' }] }).success).toBe(false);
  });
});
