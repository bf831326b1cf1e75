import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgePromptVersion } from '../../core/judge-prompts.js';
import { startFakeVllmServer, type FakeVllmServer } from '../../engines/testing/fake-vllm-server.js';
import { createScriptedInferenceEngine } from '../../gateway/testing/scripted-inference-engine.js';
import type { ChatMessage } from '../../spec/chat.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import { createJudge, dedicatedJudgeModelOf, isBuiltinJudgeModel, isBuiltinModel, judgeApiKeyOf } from './create-judge.js';
import { builtinJudgeModelDirectory, builtinModelDirectory, localModelDirectoryOf } from './create-inference-engine.js';

const none = { judgeUrl: undefined, judgeModel: undefined, judgeWeights: 'base' as const, model: 'builtin:tiny' };
const signal = new AbortController().signal;

/** Verdict prompts get −1, hint prompts a length hint the next state never asks for; records the prompts. */
function hintingEngine(): InferenceEngine & { prompts: string[] } {
  const prompts: string[] = [];
  const engine = createScriptedInferenceEngine({
    reply: (request) => {
      prompts.push(request.messages.map((message) => message.content).join('\n'));
      return { text: JSON.stringify(request).includes('hindsight hint') ? '\\boxed{1} [HINT_START]Write at least 100 words.[HINT_END]' : '\\boxed{-1}' };
    },
  });
  return Object.assign(engine, { prompts });
}

const turn = {
  context: [{ role: 'user' as const, content: 'Grade this.' }],
  // Already over 100 words: the built-in style reader sees that the hint asks for nothing new.
  response: { role: 'assistant' as const, content: Array.from({ length: 120 }, () => 'fine').join(' ') },
  nextState: [{ role: 'user' as const, content: 'That has nothing to do with what I asked you.' }],
  wantHint: true,
};

describe('createJudge', () => {
  it('builds each backend and explains what a backend is missing', () => {
    expect(createJudge({ judge: 'rules', ...none }, undefined, {}).judgeId).toBe('rules');
    const policy = createJudge({ judge: 'policy', ...none }, createScriptedInferenceEngine({}), {});
    expect([policy.judgeId, policy.judgeModel, policy.promptVersion]).toEqual(['policy', 'scripted-model', judgePromptVersion]);
    expect(() => createJudge({ judge: 'policy', ...none }, undefined, {})).toThrow(/needs the served engine/);
    expect(() => createJudge({ judge: 'openai', ...none }, undefined, {})).toThrow(/--judge-url/);
    const openai = createJudge({ ...none, judge: 'openai', judgeUrl: 'http://127.0.0.1:9/v1', judgeModel: 'gpt-judge' }, undefined, {});
    expect([openai.judgeId, openai.judgeModel]).toEqual(['openai', 'gpt-judge']);
  });

  it('knows the built-in model by name and by folder', () => {
    expect(isBuiltinModel('builtin:tiny')).toBe(true);
    expect(isBuiltinModel(builtinModelDirectory)).toBe(true);
    expect(isBuiltinModel('Qwen/Qwen3-4B')).toBe(false);
    expect(isBuiltinModel('/models/qwen3-0.6b')).toBe(false);
  });

  it('judges builtin:tiny with builtin:tiny-judge by default, and any policy with the --judge-model it names', () => {
    expect(dedicatedJudgeModelOf({ judge: 'policy', ...none })).toBe('builtin:tiny-judge');
    expect(dedicatedJudgeModelOf({ judge: 'policy', ...none, model: builtinModelDirectory })).toBe('builtin:tiny-judge');
    // The policy judges itself when asked for its served weights or named as the judge model.
    expect(dedicatedJudgeModelOf({ judge: 'policy', ...none, judgeWeights: 'served' })).toBeNull();
    expect(dedicatedJudgeModelOf({ judge: 'policy', ...none, judgeModel: 'builtin:tiny' })).toBeNull();
    expect(dedicatedJudgeModelOf({ judge: 'policy', ...none, judgeModel: builtinModelDirectory })).toBeNull();
    expect(dedicatedJudgeModelOf({ judge: 'policy', ...none, model: '/models/qwen3-0.6b' })).toBeNull();
    expect(dedicatedJudgeModelOf({ judge: 'policy', ...none, model: '/models/qwen3-0.6b', judgeModel: 'builtin:tiny-judge' })).toBe('builtin:tiny-judge');
    expect(dedicatedJudgeModelOf({ judge: 'rules', ...none })).toBeNull();
    expect(dedicatedJudgeModelOf({ judge: 'openai', ...none, judgeModel: 'gpt-judge' })).toBeNull();
    expect(isBuiltinJudgeModel('builtin:tiny-judge')).toBe(true);
    expect(isBuiltinJudgeModel(builtinJudgeModelDirectory)).toBe(true);
    expect(isBuiltinJudgeModel('builtin:tiny')).toBe(false);
    expect(localModelDirectoryOf('builtin:tiny-judge')).toBe(builtinJudgeModelDirectory);
  });

  it('gives builtin:tiny-judge the built-in budgets and hint filter, judging a real policy too', async () => {
    const engine = hintingEngine();
    const judge = createJudge({ judge: 'policy', ...none, model: '/models/qwen3-0.6b', judgeModel: 'builtin:tiny-judge' }, engine, {});
    // The built-in filter drops the hint asking for what the reply already does, as for builtin:tiny.
    expect((await judge.judge(turn, signal)).hint).toBeNull();
  });

  it('filters hints only for the built-in model, with --judge-hint-grounding on top', async () => {
    // The built-in judge drops a hint asking for what the reply already does.
    expect((await createJudge({ judge: 'policy', ...none }, hintingEngine(), {}).judge(turn, signal)).hint).toBeNull();
    const short = { ...turn, response: { role: 'assistant' as const, content: 'Fine work.' } };
    expect((await createJudge({ judge: 'policy', ...none }, hintingEngine(), {}).judge(short, signal)).hint).toBe('Write at least 100 words.');
    // Grounding: the next state never talks about length, so the invented length hint goes.
    expect((await createJudge({ judge: 'policy', ...none, judgeHintGrounding: true }, hintingEngine(), {}).judge(short, signal)).hint).toBeNull();
    // A judge of a real model keeps the hint it gives, grounding or not.
    const real = { ...none, model: '/models/qwen3-0.6b', judgeHintGrounding: true };
    expect((await createJudge({ judge: 'policy', ...real }, hintingEngine(), {}).judge(turn, signal)).hint).toBe('Write at least 100 words.');
  });

  it('gives the built-in model its small budgets and a real model a share of its context window', async () => {
    const toolOutput = `LOG-START ${'line of tool output\n'.repeat(1_500)} LOG-END`;
    const long = { ...turn, context: [...turn.context, { role: 'tool' as const, content: toolOutput, toolCallId: 'c1' } satisfies ChatMessage] };
    const builtin = hintingEngine();
    await createJudge({ judge: 'policy', ...none }, builtin, {}).judge(long, signal);
    expect(builtin.prompts[0]?.length).toBeLessThan(2_500);
    // The scripted engine reports 4096 tokens; with no tokenizer in reach they are counted by the estimate.
    const small = hintingEngine();
    await createJudge({ judge: 'policy', ...none, model: '/models/qwen3-0.6b' }, small, {}).judge(long, signal);
    expect(small.prompts[0]?.length).toBeLessThan(4_096 * 3);
    expect(small.prompts[0]?.length).toBeGreaterThan(3_000 * 3);
    expect(small.prompts[0]).toContain('LOG-END');
    const large = hintingEngine();
    await createJudge({ judge: 'policy', ...none, model: '/models/qwen3-0.6b', judgeContextTokens: 32_768 }, large, {}).judge(long, signal);
    expect(large.prompts[0]).toContain(toolOutput);
  });

  it('reads the judge API key from CLAWRL_JUDGE_API_KEY, else OPENAI_API_KEY', () => {
    expect(judgeApiKeyOf({ CLAWRL_JUDGE_API_KEY: 'a', OPENAI_API_KEY: 'b' })).toBe('a');
    expect(judgeApiKeyOf({ OPENAI_API_KEY: 'b' })).toBe('b');
    expect(judgeApiKeyOf({})).toBeUndefined();
  });
});

describe('createJudge --judge openai', () => {
  let server: FakeVllmServer;
  beforeAll(async () => {
    server = await startFakeVllmServer({ model: 'judge-model', maxModelLength: 65_536 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('keeps any hint the judge gives, and asks the endpoint for its context window', async () => {
    const configuration = { ...none, model: 'Qwen/Qwen3-4B', judge: 'openai' as const, judgeUrl: server.url, judgeModel: 'judge-model' };
    const judge = createJudge(configuration, undefined, {});
    const before = server.requests.length;
    // The fake model echoes its prompt: the verdict reads the last box (−1), the hint prompt the box outside the hint (+1).
    const echoed = {
      ...turn,
      response: { role: 'assistant' as const, content: 'Fine work.' },
      nextState: [{ role: 'user' as const, content: '\\boxed{1} [HINT_START]Keep it short. \\boxed{-1}[HINT_END]' }],
    };
    const result = await judge.judge(echoed, AbortSignal.timeout(10_000));
    expect(result.score).toBe(-1);
    // The reply is already short: the built-in style reader would drop this hint; a real model's judge keeps it.
    expect(result.hint).toBe('Keep it short. \\boxed{-1}');
    expect(server.requests.slice(before).filter((request) => request.path.endsWith('/models'))).toHaveLength(1);
  });
});
