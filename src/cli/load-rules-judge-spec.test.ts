import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinUsers } from '../builtin/user-preference.js';
import { createRulesJudge, defaultRulesJudgeSpec } from '../judge/create-rules-judge.js';
import { loadRulesJudgeSpec } from './load-rules-judge-spec.js';

function judgeInput(response: string, nextState: string) {
  return {
    context: [{ role: 'user' as const, content: 'What is 3 + 4?' }],
    response: { role: 'assistant' as const, content: response },
    nextState: [{ role: 'user' as const, content: nextState }],
    wantHint: true,
  };
}

describe('loadRulesJudgeSpec', () => {
  it('uses the built-in predicates when unset', () => {
    expect(loadRulesJudgeSpec(undefined)).toBe(defaultRulesJudgeSpec);
  });

  it("judges by a simulated user's own rules with user:<name>, whatever the next state says", async () => {
    const judge = createRulesJudge(loadRulesJudgeSpec('user:student'));
    const formatted = await judge.judge(judgeInput('1. Add them.\n2. **Answer: 7**', 'Thanks!'), new AbortController().signal);
    expect([formatted.score, formatted.hint]).toEqual([-1, builtinUsers.student.hint]);
    const plain = await judge.judge(judgeInput('Three plus four is seven, so the answer is 7.', 'This is wrong.'), new AbortController().signal);
    expect([plain.score, plain.hint]).toEqual([1, null]);
    expect(judge.judgeModel).toBe('rules:user-student');
  });

  it('reads a spec file and names what is wrong with a bad one', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-judge-rules-'));
    const good = path.join(folder, 'good.json');
    writeFileSync(good, JSON.stringify({ name: 'errors', rules: [{ when: [{ on: 'nextState', rule: { type: 'regex', pattern: 'Traceback', expect: true } }], score: -1 }] }));
    expect(loadRulesJudgeSpec(good).name).toBe('errors');
    const wrongScore = path.join(folder, 'wrong-score.json');
    writeFileSync(wrongScore, JSON.stringify({ name: 'x', rules: [{ when: [], score: 2 }] }));
    expect(() => loadRulesJudgeSpec(wrongScore)).toThrow(/--judge-rules: .*wrong-score\.json is not a rules-judge spec:\n {2}rules\.0\.score/);
    const broken = path.join(folder, 'broken.json');
    writeFileSync(broken, '{ "name": ');
    expect(() => loadRulesJudgeSpec(broken)).toThrow(/--judge-rules: cannot read .*broken\.json as JSON/);
    expect(() => loadRulesJudgeSpec(path.join(folder, 'missing.json'))).toThrow(/--judge-rules: cannot read/);
    expect(() => loadRulesJudgeSpec('user:nobody')).toThrow(/--judge-rules user:nobody: --user must be student, ta, teacher/);
  });
});
