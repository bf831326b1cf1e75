import { describe, expect, it } from 'vitest';
import { canonicalStyleHint } from '../../builtin/style-hint.js';
import { createSeededRandom, deriveSeed } from '../../core/seeded-random.js';
import type { Judge, JudgeInput, JudgeResult } from '../../spec/judge.js';
import { generateJudgeExample } from '../corpus/judge-task.js';
import { readHint } from './judge-measurement-examples.js';
import { measureDeployedJudge } from './measure-deployed-judge.js';

const plainHint = canonicalStyleHint({ formatting: 'plain' });

/** A judge that calls every reply a complaint about formatting, and records what it was asked. */
function alwaysComplains(): Judge & { inputs: JudgeInput[] } {
  const inputs: JudgeInput[] = [];
  return {
    judgeId: 'fake',
    judgeModel: 'fake',
    promptVersion: 'fake',
    inputs,
    async judge(input): Promise<JudgeResult> {
      inputs.push(input);
      const hint = input.wantHint ? plainHint : null;
      return { score: -1, votes: [], hint, hintCandidates: hint === null ? [] : [hint], judgeModel: 'fake', promptVersion: 'fake', latencyMs: 0 };
    },
  };
}

describe('readHint', () => {
  it('tells a hint that names what the user wants from one that asks for the opposite', () => {
    expect(readHint(plainHint, { formatting: 'plain' })).toEqual({ namesDimensions: true, namesValues: true, helpful: true, contrary: false });
    expect(readHint(canonicalStyleHint({ formatting: 'bold' }), { formatting: 'plain' })).toMatchObject({
      namesDimensions: true,
      namesValues: false,
      helpful: false,
      contrary: true,
    });
    // Half of a two-dimension want is helpful but does not name every violated dimension.
    expect(readHint(plainHint, { formatting: 'plain', answerFormat: 'sentence' })).toMatchObject({ namesDimensions: false, helpful: true });
    expect(readHint(null, { length: 'long' })).toEqual({ namesDimensions: false, namesValues: false, helpful: false, contrary: false });
  });
});

describe('measureDeployedJudge', () => {
  it('scores the judge’s chosen verdict and hint on the held-out examples and the users’ own words', async () => {
    const judge = alwaysComplains();
    const examples = 10;
    const result = await measureDeployedJudge({ judge, examples, seed: 'test' });

    // Verdicts are asked without hints; complaints for hints with them; per user a verdict and a hint each.
    const perUser = examples / 5;
    expect(judge.inputs.filter((input) => input.wantHint)).toHaveLength(examples + 3 * perUser);
    expect(judge.inputs).toHaveLength(2 * examples + 3 * 2 * perUser + perUser);

    expect(result.verdictAccuracy.count).toBe(examples);
    expect(result.verdictByKind['complaint']?.rate ?? 1).toBe(1);
    for (const kind of ['thanks', 'neutral']) expect(result.verdictByKind[kind]?.rate ?? 0).toBe(0);
    expect(result.hintGiven).toEqual({ rate: 1, count: examples });
    // The hint examples are those of the single-answer figures: the same seeds give the same wants.
    const formattingOnly = Array.from({ length: examples }, (_, index) =>
      generateJudgeExample(createSeededRandom(deriveSeed('test', 'hint', index)), { split: 'heldout', prompt: 'hint', nextKind: 'complaint' }),
    ).filter((example) => Object.keys(example.wanted).join() === 'formatting');
    expect(result.hintNamesDimension.rate).toBeCloseTo(formattingOnly.length / examples, 9);
    expect(result.hintNamesWantedValue.rate).toBeCloseTo(formattingOnly.filter((example) => example.wanted.formatting === 'plain').length / examples, 9);

    // The student wants plain text, so "no bold or lists" helps it; the teacher wants warmth, which it does not name.
    expect(result.builtinUsersHintByUser.student.helpful.rate).toBe(1);
    expect(result.builtinUsersHintByUser.teacher).toEqual({ helpful: { rate: 0, count: perUser }, contrary: { rate: 0, count: perUser } });
    for (const verdicts of Object.values(result.builtinUsersVerdictByUser)) {
      expect(verdicts.complaints.rate).toBe(1);
      expect(verdicts.thanks.rate).toBe(0);
    }
    // Broken replies, followed by the experiment's own complaints about them, are owed a -1.
    expect(result.brokenReplyComplaints).toEqual({ rate: 1, count: perUser });
    const brokenInputs = judge.inputs.slice(-perUser);
    expect(brokenInputs.map((input) => input.nextState[0]?.content)).toContain('Your reply just stops halfway, I can not use half an answer.');
  });
});
