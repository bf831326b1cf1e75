import { describe, expect, it } from 'vitest';
import { judgePromptVersion } from '../core/judge-prompts.js';
import { createScriptedInferenceEngine } from '../gateway/testing/scripted-inference-engine.js';
import { createJudge, judgeApiKeyOf } from './create-judge.js';

describe('createJudge', () => {
  const none = { judgeUrl: undefined, judgeModel: undefined, judgeWeights: 'base' as const };

  it('builds each backend and explains what a backend is missing', () => {
    expect(createJudge({ judge: 'rules', ...none }, undefined, {}).judgeId).toBe('rules');
    const policy = createJudge({ judge: 'policy', ...none }, createScriptedInferenceEngine({}), {});
    expect([policy.judgeId, policy.judgeModel, policy.promptVersion]).toEqual(['policy', 'scripted-model', judgePromptVersion]);
    expect(() => createJudge({ judge: 'policy', ...none }, undefined, {})).toThrow(/needs the served engine/);
    expect(() => createJudge({ judge: 'openai', ...none }, undefined, {})).toThrow(/--judge-url/);
    const openai = createJudge({ judge: 'openai', judgeUrl: 'http://127.0.0.1:9/v1', judgeModel: 'gpt-judge', judgeWeights: 'base' }, undefined, {});
    expect([openai.judgeId, openai.judgeModel]).toEqual(['openai', 'gpt-judge']);
  });

  it('passes --judge-hint-grounding to the PRM judge', async () => {
    // Verdict prompts get −1, hint prompts a length hint the next state never asks for.
    const engine = createScriptedInferenceEngine({
      reply: (request) => ({ text: JSON.stringify(request).includes('hindsight hint') ? '\\boxed{1} [HINT_START]Write at least 100 words.[HINT_END]' : '\\boxed{-1}' }),
    });
    const input = {
      context: [{ role: 'user' as const, content: 'Grade this.' }],
      response: { role: 'assistant' as const, content: 'The working is right and the answer is clear, so full marks are deserved here.' },
      nextState: [{ role: 'user' as const, content: 'That has nothing to do with what I asked you.' }],
      wantHint: true,
    };
    const signal = new AbortController().signal;
    expect((await createJudge({ judge: 'policy', ...none }, engine, {}).judge(input, signal)).hint).toBe('Write at least 100 words.');
    expect((await createJudge({ judge: 'policy', ...none, judgeHintGrounding: true }, engine, {}).judge(input, signal)).hint).toBeNull();
  });

  it('reads the judge API key from CLAWRL_JUDGE_API_KEY, else OPENAI_API_KEY', () => {
    expect(judgeApiKeyOf({ CLAWRL_JUDGE_API_KEY: 'a', OPENAI_API_KEY: 'b' })).toBe('a');
    expect(judgeApiKeyOf({ OPENAI_API_KEY: 'b' })).toBe('b');
    expect(judgeApiKeyOf({})).toBeUndefined();
  });
});
