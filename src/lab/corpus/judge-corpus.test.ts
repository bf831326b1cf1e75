import { describe, expect, it } from 'vitest';
import { buildHintPrompt, buildJudgePrompt } from '../../core/judge-prompts.js';
import { builtinJudgePromptBudget } from '../../builtin/builtin-judge-options.js';
import { createSeededRandom, deriveSeed } from '../../core/seeded-random.js';
import { generateJudgeCorpusExample, judgeCorpusKindWeights, outcomeScores, type OutcomeKind } from './judge-corpus.js';

const outcomeKinds = Object.keys(outcomeScores) as OutcomeKind[];
const draw = (kind: OutcomeKind | 'style' | undefined, index: number, prompt?: 'verdict' | 'hint') =>
  generateJudgeCorpusExample(createSeededRandom(deriveSeed(7, 'judge-corpus-test', kind ?? 'any', index)), {
    split: 'train',
    ...(kind === undefined ? {} : { kind }),
    ...(prompt === undefined ? {} : { prompt }),
  });
const nextText = (example: ReturnType<typeof draw>) => example.input.nextState.map((message) => message.content).join(' ');

describe('generateJudgeCorpusExample', () => {
  it('answers each kind\'s verdict prompt with its reading and box, on exactly the judge\'s prompt', () => {
    for (const kind of outcomeKinds) {
      for (let index = 0; index < 20; index += 1) {
        const example = draw(kind, index, 'verdict');
        expect(example.kind).toBe(kind);
        expect(example.expectedScore).toBe(outcomeScores[kind]);
        expect(example.messages.slice(0, -1)).toEqual(buildJudgePrompt(example.input, builtinJudgePromptBudget));
        const answer = example.messages.at(-1)?.content ?? '';
        expect(answer).toMatch(new RegExp(`^[A-Z][^\\n]+ \\\\boxed\\{${outcomeScores[kind]}\\}$`));
      }
    }
  });

  it('answers hint prompts on these kinds with no hint, since they name no style', () => {
    for (const kind of outcomeKinds) {
      const example = draw(kind, 3, 'hint');
      expect(example.messages.slice(0, -1)).toEqual(buildHintPrompt(example.input, builtinJudgePromptBudget));
      expect(example.messages.at(-1)?.content).toMatch(/\\boxed\{-1\}$/);
      expect(example.messages.at(-1)?.content).not.toContain('[HINT_START]');
    }
  });

  it('keeps the shared judge task\'s style examples, hints included', () => {
    const styles = Array.from({ length: 60 }, (_, index) => draw('style', index, 'hint'));
    expect(styles.every((example) => ['complaint', 'thanks', 'neutral', 'broken'].includes(example.kind))).toBe(true);
    expect(styles.some((example) => example.messages.at(-1)?.content.includes('[HINT_START]'))).toBe(true);
  });

  it('judges tool results after a tool call, and user messages otherwise', () => {
    for (const kind of outcomeKinds) {
      const example = draw(kind, 5);
      const tool = kind.startsWith('tool-');
      expect(example.input.nextState[0]?.role).toBe(tool ? 'tool' : 'user');
      expect(example.input.response.toolCalls?.length ?? 0).toBe(tool ? 1 : 0);
      if (tool) expect(example.input.nextState[0]?.toolCallId).toBe(example.input.response.toolCalls?.[0]?.id);
    }
  });

  it('writes many different next states per kind, with no placeholder left', () => {
    for (const kind of outcomeKinds) {
      const texts = Array.from({ length: 200 }, (_, index) => nextText(draw(kind, index)));
      expect(new Set(texts).size, kind).toBeGreaterThan(kind === 'tool-success' ? 80 : 120);
      for (const text of texts) expect(text, kind).not.toMatch(/\{[a-z]+\}/);
    }
  });

  it('gives corrections the right number most of the time, and thankful complaints their thanks and their complaint', () => {
    const corrections = Array.from({ length: 100 }, (_, index) => draw('correction', index));
    const withRight = corrections.filter((example) => {
      const replyNumbers = example.input.response.content.match(/\d+/g) ?? [];
      const wrong = replyNumbers.at(-1);
      const stated = nextText(example).match(/\d+/g) ?? [];
      return stated.some((number) => number !== wrong && !example.input.context.at(-1)?.content.includes(number));
    });
    expect(withRight.length).toBeGreaterThan(50);
    for (let index = 0; index < 50; index += 1) {
      expect(nextText(draw('thankful-complaint', index)).toLowerCase()).toMatch(/thank|thx|appreciat|cheers|grateful|kind of you|effort|nice try|tried|\bty\b|\bta\b/);
    }
  });

  it('draws every kind at about its weight', () => {
    const counts = new Map<string, number>();
    const total = 4_000;
    for (let index = 0; index < total; index += 1) {
      const example = draw(undefined, index);
      const kind = ['complaint', 'thanks', 'neutral', 'broken'].includes(example.kind) ? 'style' : example.kind;
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
    for (const [kind, weight] of judgeCorpusKindWeights) expect(Math.abs((counts.get(kind) ?? 0) / total - weight), kind).toBeLessThan(0.03);
  });

  it('depends only on its random', () => {
    expect(draw(undefined, 42)).toEqual(draw(undefined, 42));
  });
});
