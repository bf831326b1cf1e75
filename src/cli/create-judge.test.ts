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

  it('reads the judge API key from CLAWRL_JUDGE_API_KEY, else OPENAI_API_KEY', () => {
    expect(judgeApiKeyOf({ CLAWRL_JUDGE_API_KEY: 'a', OPENAI_API_KEY: 'b' })).toBe('a');
    expect(judgeApiKeyOf({ OPENAI_API_KEY: 'b' })).toBe('b');
    expect(judgeApiKeyOf({})).toBeUndefined();
  });
});
