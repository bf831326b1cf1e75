import { describe, expect, it } from 'vitest';
import type { Judge, JudgeInput, JudgeResult } from '../../spec/judge.js';
import type { JudgeScore, JudgeVote } from '../../spec/records.js';
import type { HeldoutNextState } from './judge-heldout-set.js';
import { formatJudgeHeldoutResult, measureJudgeHeldout } from './measure-judge-heldout.js';

function row(id: string, kind: string, expected: -1 | 1, next: string, tool = false): HeldoutNextState {
  return {
    id,
    kind,
    expected,
    input: {
      context: [{ role: 'user', content: 'What is 2 + 2?' }],
      response: { role: 'assistant', content: '5' },
      nextState: [tool ? { role: 'tool', content: next, toolCallId: 'c', name: 'calc' } : { role: 'user', content: next }],
    },
  };
}

/** Calls every next state with "wrong" in it −1, anything else +1, and says why in each vote. */
const wordJudge: Judge = {
  judgeId: 'words',
  judgeModel: 'test',
  promptVersion: 'v0',
  async judge(input: JudgeInput): Promise<JudgeResult> {
    expect(input.wantHint).toBe(false);
    const score: JudgeScore = /wrong/i.test(input.nextState[0]?.content ?? '') ? -1 : 1;
    const vote: JudgeVote = { kind: 'verdict', text: `read \\boxed{${score}}`, score, hint: null, rejection: null };
    return { score, votes: [vote, vote, vote], hint: null, hintCandidates: [], judgeModel: 'test', promptVersion: 'v0', latencyMs: 0 };
  },
};

describe('measureJudgeHeldout', () => {
  it('counts the majority verdict against the expected one, overall and per kind, and lists the misses with their votes', async () => {
    const rows = [
      row('c1', 'correction', -1, 'Wrong, it is 4.'),
      row('c2', 'correction', -1, 'No — 4, not 5.'),
      row('t1', 'thanks', 1, 'Thanks, wrong though.'),
      row('t2', 'thanks', 1, 'Thanks.'),
      row('e1', 'tool-error', -1, 'Error: wrong input', true),
    ];
    let clock = 0;
    const result = await measureJudgeHeldout({ judge: wordJudge, rows, now: () => (clock += 1000) });
    expect(result.accuracy).toEqual({ rate: 3 / 5, count: 5 });
    expect(result.byKind).toEqual({ correction: { rate: 0.5, count: 2 }, thanks: { rate: 0.5, count: 2 }, 'tool-error': { rate: 1, count: 1 } });
    expect(result.wrong).toEqual([
      { id: 'c2', kind: 'correction', nextState: 'No — 4, not 5.', expected: -1, got: 1, votes: ['read \\boxed{1}', 'read \\boxed{1}', 'read \\boxed{1}'] },
      { id: 't1', kind: 'thanks', nextState: 'Thanks, wrong though.', expected: 1, got: -1, votes: ['read \\boxed{-1}', 'read \\boxed{-1}', 'read \\boxed{-1}'] },
    ]);
    expect(result.seconds).toBe(1);
    const text = formatJudgeHeldoutResult(result);
    expect(text).toContain('overall     60.0% of 5');
    expect(text).toContain('c2  expected -1, got +1: "No — 4, not 5."');
  });
});
