import { describe, expect, it } from 'vitest';
import { createRedactor } from '../core/redaction/create-redactor.js';
import type { Judge } from '../spec/judge.js';
import { createRedactingJudge } from './create-redacting-judge.js';

describe('createRedactingJudge', () => {
  it('redacts the votes, hints and hint candidates a judge returns, and keeps the rest', async () => {
    const inner: Judge = {
      judgeId: 'rules',
      judgeModel: 'm',
      promptVersion: 'v1',
      judge: async () => ({
        score: 1,
        votes: [{ kind: 'hint', text: 'Mail ann@corp.io. \\boxed{1}', score: 1, hint: 'Mail ann@corp.io first.', rejection: null }],
        hint: 'Mail ann@corp.io first.',
        hintCandidates: ['Mail ann@corp.io first.', 'Answer briefly.'],
        judgeModel: 'm',
        promptVersion: 'v1',
        latencyMs: 3,
      }),
    };
    const judge = createRedactingJudge(inner, createRedactor());
    expect(judge.promptVersion).toBe('v1');
    const result = await judge.judge({ context: [], response: { role: 'assistant', content: '' }, nextState: [], wantHint: true }, new AbortController().signal);
    expect(result).toMatchObject({
      score: 1,
      votes: [{ text: 'Mail [REDACTED:email]. \\boxed{1}', hint: 'Mail [REDACTED:email] first.', score: 1 }],
      hint: 'Mail [REDACTED:email] first.',
      hintCandidates: ['Mail [REDACTED:email] first.', 'Answer briefly.'],
      latencyMs: 3,
    });
  });
});
