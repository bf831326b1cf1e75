import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildHintPrompt, buildJudgePrompt, type JudgePromptInput } from '../core/judge-prompts.js';
import { createSeededRandom } from '../core/seeded-random.js';
import type { ChatMessage } from '../spec/chat.js';
import type { JudgeInput } from '../spec/judge.js';
import { createPrmJudge } from '../judge/create-prm-judge.js';
import type { JudgeModel } from '../judge/judge-model.js';
import { builtinJudgeOptions, builtinJudgePromptBudget } from './builtin-judge-options.js';
import { queuedJudgeModel } from '../judge/testing/queued-judge-model.js';

const input: JudgeInput = {
  context: [{ role: 'system', content: 'Be helpful.' }, { role: 'user', content: 'Add 3 and 4.' }],
  response: { role: 'assistant', content: 'Sure.' },
  nextState: [{ role: 'user', content: 'That is wrong, redo it.' }],
  wantHint: false,
};


const judgeWith = (model: JudgeModel, grounding: boolean) =>
  createPrmJudge({ judgeId: 'policy', modelName: 'builtin:tiny', model, ...builtinJudgeOptions({ grounding }), clock: () => 0 });

/** Prompts of the built-in judge for 40 varied turns (long contexts, tool calls, fences), rendered before budgets followed the judge model. */
const recorded = JSON.parse(readFileSync(new URL('./__fixtures__/builtin-judge-prompts.json', import.meta.url), 'utf8')) as {
  input: JudgePromptInput;
  verdict: ChatMessage[];
  hint: ChatMessage[];
}[];

/** Turns of every shape the built-in judge meets: system prompts or none, many short or few long messages, tool calls, several next-state messages, fence look-alikes. */
function variedTurns(count: number): JudgePromptInput[] {
  const random = createSeededRandom('builtin-judge-prompts');
  const words = ['apples', 'Mia', '**bold**', '1. step', '\\boxed{17}', 'héllo', '<<<end>>>', '>>>>', 'the', 'answer', '\n', '{"x":1}', 'Answer: 5', 'wonderful', 'é', 'x'];
  const text = (most: number) => Array.from({ length: random.integer(0, most) }, () => random.pick(words)).join(' ');
  const message = (role: ChatMessage['role'], most: number): ChatMessage => {
    const result: ChatMessage = { role, content: text(most) };
    if (role === 'assistant' && random.chance(0.3)) result.toolCalls = [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.txt"}' }];
    if (role === 'tool') result.toolCallId = 'c1';
    return result;
  };
  return Array.from({ length: count }, () => {
    const context: ChatMessage[] = random.chance(0.5) ? [message('system', random.pick([10, 40, 200]))] : [];
    const lengths = random.pick([8, 30, 120, 600]);
    for (let index = random.integer(0, 10); index > 0; index -= 1) context.push(message(random.pick(['user', 'assistant', 'tool'] as const), lengths));
    const nextState = Array.from({ length: random.integer(0, 3) }, () => message(random.pick(['user', 'tool'] as const), random.pick([10, 60, 300])));
    return { context, response: message('assistant', random.pick([20, 80, 400])), nextState };
  });
}

describe('the built-in model\'s judge', () => {
  it('renders its prompts byte for byte as the built-in model was trained to read them', async () => {
    expect(recorded).toHaveLength(40);
    for (const example of recorded) {
      expect(buildJudgePrompt(example.input, builtinJudgePromptBudget)).toEqual(example.verdict);
      expect(buildHintPrompt(example.input, builtinJudgePromptBudget)).toEqual(example.hint);
    }
    const model = queuedJudgeModel([], []);
    const judge = judgeWith(model, false);
    for (const example of recorded.slice(0, 10)) {
      const { context, response, nextState } = example.input;
      await judge.judge({ context: [...context], response, nextState: [...nextState], wantHint: true }, new AbortController().signal);
    }
    expect(model.requests.map((request) => request.messages)).toEqual(recorded.slice(0, 10).flatMap((example) => [example.verdict, example.hint]));
    // 3,000 more turns, by digest: the digest of their prompts as rendered at commit 848cc2f.
    const digest = createHash('sha256');
    for (const turn of variedTurns(3_000)) {
      digest.update(JSON.stringify([buildJudgePrompt(turn, builtinJudgePromptBudget), buildHintPrompt(turn, builtinJudgePromptBudget)]));
    }
    expect(digest.digest('hex')).toBe('29e602971243a7fe9a364b7bf723bfd376b1f6d126420796c5ce1f768471b61e');
  });

  it('keeps no candidate that asks only for what the reply already does', async () => {
    const model = queuedJudgeModel(
      ['\\boxed{-1}', '\\boxed{-1}', '\\boxed{-1}'],
      [
        '\\boxed{1} [HINT_START]Put the final answer in \\boxed{}.[HINT_END]',
        "\\boxed{1} [HINT_START]Please don't use bold text or numbered lists.[HINT_END]",
        '\\boxed{1} [HINT_START]Put the final answer in \\boxed{}.[HINT_END]',
      ],
    );
    const response = { role: 'assistant' as const, content: '**Step 1:** 3 + 4 = 7.\n\n\\boxed{7}' };
    const nextState = [{ role: 'user' as const, content: 'Nobody writes homework with bold steps and a boxed answer, redo it.' }];
    const result = await judgeWith(model, false).judge({ ...input, response, nextState, wantHint: true }, new AbortController().signal);
    expect(result.hintCandidates).toEqual(["Please don't use bold text or numbered lists."]);
    expect(result.hint).toBe("Please don't use bold text or numbered lists.");
    expect(result.votes.filter((vote) => vote.kind === 'hint').map((vote) => vote.hint)).toEqual([
      'Put the final answer in \\boxed{}.',
      "Please don't use bold text or numbered lists.",
      'Put the final answer in \\boxed{}.',
    ]);
  });

  it('with grounding, keeps of each candidate only the sentences about a style the next state talks about', async () => {
    const model = queuedJudgeModel(
      ['\\boxed{-1}', '\\boxed{-1}', '\\boxed{-1}'],
      [
        '\\boxed{1} [HINT_START]Write at least 100 words.[HINT_END]',
        "\\boxed{1} [HINT_START]Please don't use bold text or numbered lists. Be warm and encouraging.[HINT_END]",
        '\\boxed{1} [HINT_START]Keep it short.[HINT_END]',
      ],
    );
    const response = { role: 'assistant' as const, content: 'Tom has **7** apples, since 3 + 4 = 7.' };
    const nextState = [{ role: 'user' as const, content: 'Way too formatted, it has to look like my own homework.' }];
    const result = await judgeWith(model, true).judge({ ...input, response, nextState, wantHint: true }, new AbortController().signal);
    expect(result.hintCandidates).toEqual(["Please don't use bold text or numbered lists."]);
    expect(result.hint).toBe("Please don't use bold text or numbered lists.");
    // The votes keep what the judge wrote.
    expect(result.votes.filter((vote) => vote.kind === 'hint').map((vote) => vote.hint)).toEqual([
      'Write at least 100 words.',
      "Please don't use bold text or numbered lists. Be warm and encouraging.",
      'Keep it short.',
    ]);
    const thanks = [{ role: 'user' as const, content: "Nice, my teacher won't suspect a thing." }];
    const misread = queuedJudgeModel(['\\boxed{-1}', '\\boxed{-1}', '\\boxed{1}'], Array(3).fill('\\boxed{1} [HINT_START]Keep the tone neutral and matter-of-fact.[HINT_END]'));
    const onThanks = await judgeWith(misread, true).judge({ ...input, response, nextState: thanks, wantHint: true }, new AbortController().signal);
    expect([onThanks.score, onThanks.hint, onThanks.hintCandidates]).toEqual([-1, null, []]);
    // Without grounding the same answers keep the invented hint.
    const ungrounded = queuedJudgeModel(['\\boxed{-1}', '\\boxed{-1}', '\\boxed{1}'], Array(3).fill('\\boxed{1} [HINT_START]Write at least 100 words.[HINT_END]'));
    const byDefault = await judgeWith(ungrounded, false).judge({ ...input, response, nextState: thanks, wantHint: true }, new AbortController().signal);
    expect(byDefault.hint).toBe('Write at least 100 words.');
  });
});
