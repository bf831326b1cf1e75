import { describe, expect, it } from 'vitest';
import { createRulesJudge } from '../judge/create-rules-judge.js';
import { parseStyleHint } from './style-hint.js';
import {
  allComplaints,
  brokenRules,
  builtinUserNames,
  complaintsFor,
  builtinUsers,
  parseSimulatedUser,
  rulesJudgeSpecForUser,
  satisfiesPreference,
  type Preference,
} from './user-preference.js';

const long = (prefix: string): string => `${prefix} ${Array.from({ length: 100 }, () => 'word').join(' ')}`;

describe('parseSimulatedUser', () => {
  it('accepts every built-in user and a hand-written file', () => {
    for (const name of builtinUserNames) expect(parseSimulatedUser(builtinUsers[name]).ok).toBe(true);
    const result = parseSimulatedUser({
      name: 'brief',
      task: 'solve',
      preference: { description: 'short', rules: [{ type: 'maxWords', value: 20 }] },
      complaints: ['too long'],
      thanks: ['ok thanks'],
      hint: 'Keep it short.',
      extra: 'ignored',
    });
    expect(result.ok).toBe(true);
  });

  it('reports bad files as data with paths', () => {
    const result = parseSimulatedUser({
      name: 'x',
      task: 'dance',
      preference: { description: 'd', rules: [{ type: 'regex', pattern: '(', expect: true }] },
      complaints: [],
      thanks: ['t'],
      hint: 'h',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.some((issue) => issue.startsWith('task'))).toBe(true);
    expect(result.issues.some((issue) => issue.startsWith('preference.rules.0'))).toBe(true);
    expect(result.issues.some((issue) => issue.startsWith('complaints'))).toBe(true);
    const statefulFlags = parseSimulatedUser({
      name: 'x',
      task: 'solve',
      preference: { description: 'd', rules: [{ type: 'regex', pattern: 'a', flags: 'g', expect: true }] },
      complaints: ['c'],
      thanks: ['t'],
      hint: 'h',
    });
    expect(statefulFlags.ok).toBe(false);
  });
});

describe('satisfiesPreference', () => {
  const preference: Preference = {
    description: 'test',
    rules: [
      { type: 'regex', pattern: 'answer', flags: 'i', expect: true },
      { type: 'maxWords', value: 5 },
      { type: 'minWords', value: 2 },
    ],
  };

  it('needs every rule to hold', () => {
    expect(satisfiesPreference(preference, 'The ANSWER is 4')).toBe(true);
    expect(brokenRules(preference, 'The ANSWER is 4')).toEqual([]);
    expect(brokenRules(preference, 'answer')).toEqual([2]);
    expect(brokenRules(preference, 'one two three four five six')).toEqual([0, 1]);
  });

  it('encodes the student: no bold, no numbered lines, no boxed answers', () => {
    const { preference: student } = builtinUsers.student;
    expect(satisfiesPreference(student, 'Mia has 12 and gets 5, so she has 17 apples.\nAnswer: 17')).toBe(true);
    expect(satisfiesPreference(student, 'Mia has **17** apples.')).toBe(false);
    expect(satisfiesPreference(student, 'Steps:\n1. Add them.\n2. Done.')).toBe(false);
    expect(satisfiesPreference(student, 'The answer is \\boxed{17}.')).toBe(false);
  });

  it('encodes the ta (at least 100 words) and the teacher (warm phrases)', () => {
    expect(satisfiesPreference(builtinUsers.ta.preference, long('Graded.'))).toBe(true);
    expect(satisfiesPreference(builtinUsers.ta.preference, 'Correct, 12 + 5 = 17.')).toBe(false);
    expect(satisfiesPreference(builtinUsers.teacher.preference, 'Well done! You added correctly.')).toBe(true);
    expect(satisfiesPreference(builtinUsers.teacher.preference, 'WONDERFUL effort.')).toBe(true);
    expect(satisfiesPreference(builtinUsers.teacher.preference, 'You added correctly.')).toBe(false);
  });
});

describe('complaintsFor', () => {
  const user = parseSimulatedUser({
    name: 'plain-writer',
    task: 'solve',
    preference: {
      description: 'No bold, no boxes, short.',
      rules: [
        { type: 'regex', pattern: '\\*\\*', expect: false, complaints: ['Take the bold out.'] },
        { type: 'regex', pattern: '\\\\boxed', expect: false, complaints: ['Lose the box.', 'No box please.'] },
        { type: 'maxWords', value: 20 },
      ],
    },
    complaints: ['Not like this.'],
    thanks: ['Thanks.'],
    hint: 'Do not use bold text.',
  });
  if (!user.ok) throw new Error(user.issues.join('; '));

  it('names what the reply breaks: the complaints of its broken rules, else the general ones', () => {
    expect(complaintsFor(user.user, 'The answer is 4.')).toEqual([]);
    expect(complaintsFor(user.user, 'The answer is **4**.')).toEqual(['Take the bold out.']);
    expect(complaintsFor(user.user, 'The answer is \\boxed{4}.')).toEqual(['Lose the box.', 'No box please.']);
    expect(complaintsFor(user.user, 'It is **4**, so \\boxed{4}.')).toEqual(['Take the bold out.', 'Lose the box.', 'No box please.']);
    expect(complaintsFor(user.user, long('The answer is 4.'))).toEqual(['Not like this.']);
    expect(allComplaints(user.user)).toEqual(['Not like this.', 'Take the bold out.', 'Lose the box.', 'No box please.']);
  });

  it('rejects a rule with an empty complaint list', () => {
    const parsed = parseSimulatedUser({
      name: 'x', task: 'solve', complaints: ['No.'], thanks: ['Yes.'], hint: 'Be brief.',
      preference: { description: 'short', rules: [{ type: 'maxWords', value: 5, complaints: [] }] },
    });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues.join('\n')).toMatch(/preference\.rules\.0\.complaints/);
  });
});

describe('builtin users', () => {
  it('hint in the style-hint phrasing at the preferred values', () => {
    expect(parseStyleHint(builtinUsers.student.hint)).toEqual({ formatting: 'plain', answerFormat: 'sentence' });
    expect(parseStyleHint(builtinUsers.ta.hint)).toEqual({ length: 'long' });
    expect(parseStyleHint(builtinUsers.teacher.hint)).toEqual({ tone: 'warm' });
  });

  it('complain without reciting the preference description', () => {
    for (const name of builtinUserNames) {
      const user = builtinUsers[name];
      expect(user.complaints.length).toBeGreaterThanOrEqual(3);
      expect(new Set(user.complaints).size).toBe(user.complaints.length);
      for (const complaint of user.complaints) {
        expect(complaint).not.toContain(user.preference.description);
        expect(complaint).not.toContain(user.hint);
      }
    }
  });
});

describe('rulesJudgeSpecForUser', () => {
  it('judges a reply +1 when it keeps the preference and -1 with the user hint when not', async () => {
    const judge = createRulesJudge(rulesJudgeSpecForUser(builtinUsers.student), () => 0);
    const turn = (response: string) => ({
      context: [{ role: 'user' as const, content: 'Solve 2+3.' }],
      response: { role: 'assistant' as const, content: response },
      nextState: [{ role: 'user' as const, content: 'whatever' }],
      wantHint: true,
    });
    const signal = new AbortController().signal;
    expect(await judge.judge(turn('Two plus three makes five.'), signal)).toMatchObject({ score: 1, hint: null });
    expect(await judge.judge(turn('The answer is **5**.'), signal)).toMatchObject({ score: -1, hint: builtinUsers.student.hint });
    expect(judge.judgeModel).toBe('rules:user-student');
  });
});
