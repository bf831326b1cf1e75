import { describe, expect, it } from 'vitest';
import { canonicalStyleHint, parseStyleHint } from '../../builtin/style-hint.js';
import { hintSystemPrompt, judgeSystemPrompt } from '../../core/judge-prompts.js';
import { parseHintResponse, parseVote } from '../../core/judge-votes.js';
import { createSeededRandom } from '../../core/seeded-random.js';
import { classifyStyle, countWords, styleDimensions, styleValues, type StyleDimension } from '../../builtin/style.js';
import { allComplaints, builtinUserNames, builtinUsers } from '../../builtin/user-preference.js';
import { generateCorpus } from './corpus-generator.js';
import { describeWanted, generateJudgeExample, type JudgeExample } from './judge-task.js';
import { composeComplaint, composedNextStateParts, composeNeutral, composeThanks } from './composed-next-states.js';
import { complaintPhrases, nextStatePhrases, type NextStatePhrases } from './next-state-phrases.js';
import type { CorpusSplit } from '../../rollouts/environments/word-problems.js';

function judgeExamples(split: CorpusSplit, count: number): JudgeExample[] {
  return generateCorpus({ seed: 7, count, split, taskWeights: { solve: 0, grade: 0, comment: 0, judge: 1 } }).filter(
    (example): example is JudgeExample => example.task === 'judge',
  );
}

/** The reply and the next state as fenced in the judge prompt. */
function fencedParts(example: JudgeExample): { reply: string; next: string } {
  const prompt = example.messages[1]?.content ?? '';
  const reply = /Reply:\n<<<assistant>>>\n([\s\S]*?)\n<<<end>>>/.exec(prompt)?.[1] ?? '';
  const next = /Next state:\n<<<user>>>\n([\s\S]*?)\n<<<end>>>/.exec(prompt)?.[1] ?? '';
  return { reply, next };
}

function allPhrases(phrases: NextStatePhrases): string[] {
  const complaints = styleDimensions.flatMap((dimension) =>
    (styleValues[dimension] as readonly string[]).flatMap((value) => [
      ...(phrases.complaints[dimension] as Record<string, readonly string[]>)[value]!,
    ]),
  );
  return [...complaints, ...phrases.thanks, ...phrases.neutral];
}

const train = judgeExamples('train', 1500);
const heldout = judgeExamples('heldout', 600);

describe('judge examples', () => {
  it('use exactly the judge and hint prompts', () => {
    for (const example of train) {
      expect(example.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant']);
      expect(example.messages[0]?.content).toBe(example.prompt === 'verdict' ? judgeSystemPrompt : hintSystemPrompt);
    }
    const kinds = new Set(train.map((example) => `${example.prompt}/${example.nextKind}`));
    expect(kinds.size).toBe(6);
    const withBroken = generateCorpus({ seed: 7, count: 300, split: 'train', taskWeights: { solve: 0, grade: 0, comment: 0, judge: 1 }, brokenReplyShare: 0.2 });
    const brokenShare = withBroken.filter((example) => example.task === 'judge' && example.nextKind === 'broken').length / withBroken.length;
    expect(brokenShare).toBeGreaterThan(0.1);
    expect(brokenShare).toBeLessThan(0.3);
  });

  it('answer with the verdict the next message calls for', () => {
    for (const example of train) {
      const answer = example.messages[2]?.content ?? '';
      if (example.prompt === 'verdict') {
        const expected = { complaint: -1, thanks: 1, neutral: 0, broken: -1 }[example.nextKind];
        expect(example.expectedScore).toBe(expected);
        expect(parseVote(answer)).toEqual({ score: expected });
        expect(example.hint).toBeNull();
      } else {
        const parsed = parseHintResponse(answer);
        expect(parsed.accepted).toBe(example.nextKind === 'complaint');
        expect(parsed.hint).toBe(example.hint);
      }
    }
  });

  it('complain only about dimensions the reply violates, and hint the wanted values', () => {
    for (const example of [...train, ...heldout]) {
      const { reply, next } = fencedParts(example);
      const actual = classifyStyle(reply.replace(' [...] ', ' '));
      if (example.nextKind !== 'complaint') {
        expect(example.wanted).toEqual({});
        continue;
      }
      const dimensions = Object.keys(example.wanted) as StyleDimension[];
      expect(dimensions.length).toBeGreaterThanOrEqual(1);
      expect(dimensions.length).toBeLessThanOrEqual(2);
      expect(example.messages[2]?.content.startsWith(`The user wants ${describeWanted(example.wanted)}`)).toBe(true);
      for (const dimension of dimensions) {
        expect(example.replyStyle[dimension]).not.toBe(example.wanted[dimension]);
        // Truncation can cut the middle of a long reply, so only check what survives it.
        if (dimension !== 'length' && !reply.includes('[...]')) expect(actual[dimension]).toBe(example.replyStyle[dimension]);
        if (example.split === 'heldout') {
          const phrases = complaintPhrases('heldout', dimension, example.wanted[dimension] as never).map((phrase) =>
            phrase.split('{answer}')[0],
          );
          expect(phrases.some((prefix) => next.includes(prefix ?? ''))).toBe(true);
        }
      }
      if (example.prompt === 'hint') {
        expect(parseStyleHint(example.hint ?? '')).toEqual(example.wanted);
        expect(example.hint).toBe(canonicalStyleHint(example.wanted));
      }
    }
  });

  it('follow some one-line training replies with a complaint asking for more, judged as a complaint', () => {
    const oneLiners = train.filter((example) => example.nextKind !== 'broken' && countWords(fencedParts(example).reply) <= 5);
    expect(oneLiners.length).toBeGreaterThan(5);
    for (const example of oneLiners) {
      expect(example.nextKind).toBe('complaint');
      expect(example.wanted).toEqual({ length: 'long' });
      expect(example.replyStyle).toEqual({ ...classifyStyle(fencedParts(example).reply), length: 'short' });
      if (example.prompt === 'verdict') expect(example.expectedScore).toBe(-1);
      else expect(example.hint).toBe(canonicalStyleHint({ length: 'long' }));
    }
    expect(new Set(oneLiners.map((example) => example.replyStyle.tone))).toEqual(new Set(['warm', 'neutral']));
    expect(heldout.filter((example) => countWords(fencedParts(example).reply) <= 5)).toEqual([]);
  });

  it('mix whole training sentences with composed ones, and take held-out ones from their list', () => {
    const phrases = nextStatePhrases('train');
    const whole = train.filter((example) => example.nextKind !== 'complaint' && [...phrases.thanks, ...phrases.neutral].includes(fencedParts(example).next));
    const others = train.filter((example) => example.nextKind !== 'complaint');
    expect(whole.length / others.length).toBeGreaterThan(0.15);
    expect(whole.length / others.length).toBeLessThan(0.5);
    const heldoutPhrases = nextStatePhrases('heldout');
    for (const example of heldout.filter((candidate) => candidate.nextKind !== 'complaint')) {
      const list = example.nextKind === 'thanks' ? heldoutPhrases.thanks : heldoutPhrases.neutral;
      expect(list).toContain(fencedParts(example).next);
    }
  });

  it('can be asked for a given prompt and next-state kind', () => {
    const example = generateJudgeExample(createSeededRandom(1), { split: 'heldout', prompt: 'hint', nextKind: 'neutral' });
    expect(example.expectedScore).toBe(-1);
    expect(parseHintResponse(example.messages[2]?.content ?? '').reason).toBe('negative-vote');
    expect(nextStatePhrases('heldout').neutral).toContain(fencedParts(example).next);
  });
});

describe('next-state phrase lists', () => {
  it('share nothing between train and held-out, and leave out the built-in users', () => {
    const trainPhrases = allPhrases(nextStatePhrases('train'));
    const heldoutPhrases = allPhrases(nextStatePhrases('heldout'));
    for (const phrase of heldoutPhrases) expect(trainPhrases).not.toContain(phrase);
    for (const name of builtinUserNames) {
      for (const phrase of [...allComplaints(builtinUsers[name]), ...builtinUsers[name].thanks]) {
        expect(trainPhrases).not.toContain(phrase);
        expect(heldoutPhrases).not.toContain(phrase);
      }
    }
  });

  it('give every value several complaints in both splits', () => {
    for (const split of ['train', 'heldout'] as const) {
      for (const dimension of styleDimensions) {
        for (const value of styleValues[dimension]) {
          expect(complaintPhrases(split, dimension, value as never).length).toBeGreaterThanOrEqual(split === 'train' ? 5 : 3);
        }
      }
    }
  });

  it('are used by held-out judge examples only', () => {
    const trainPhrases = new Set(allPhrases(nextStatePhrases('train')));
    for (const example of heldout) {
      const { next } = fencedParts(example);
      for (const phrase of trainPhrases) {
        if (!phrase.includes('{answer}')) expect(next.includes(phrase)).toBe(false);
      }
    }
  });
});

describe('composed training next states', () => {
  it('never reproduce a held-out sentence or a built-in user\'s words', () => {
    const reserved = [
      ...allPhrases(nextStatePhrases('heldout')),
      ...builtinUserNames.flatMap((name) => [...allComplaints(builtinUsers[name]), ...builtinUsers[name].thanks]),
    ].map((phrase) => phrase.toLowerCase());
    const random = createSeededRandom(3);
    const composed = new Set<string>();
    for (let index = 0; index < 4000; index += 1) {
      const dimension = random.pick(styleDimensions);
      composed.add(composeComplaint(random, { [dimension]: random.pick(styleValues[dimension] as readonly string[]) }, 42).toLowerCase());
      composed.add(composeThanks(random).toLowerCase());
      composed.add(composeThanks(random, { formatting: "plain", length: "long", tone: "warm", answerFormat: "boxed" }).toLowerCase());
      composed.add(composeNeutral(random).toLowerCase());
    }
    expect(composed.size).toBeGreaterThan(5000);
    expect(reserved.map((phrase) => phrase.replaceAll('{answer}', '42')).filter((phrase) => composed.has(phrase))).toEqual([]);
  });

  it('thank for style values the reply has, never for ones it lacks', () => {
    const random = createSeededRandom(5);
    const { stylePraises } = composedNextStateParts;
    const replyStyle = { formatting: 'plain', length: 'long', tone: 'warm', answerFormat: 'sentence' } as const;
    const lacking = styleDimensions.flatMap((dimension) =>
      Object.entries(stylePraises[dimension]).filter(([value]) => value !== replyStyle[dimension]).flatMap(([, parts]) => parts as string[]),
    );
    const had = styleDimensions.flatMap((dimension) => [
      ...(stylePraises[dimension] as Record<string, readonly string[]>)[replyStyle[dimension]]!,
      ...(composedNextStateParts.styleNouns[dimension] as Record<string, readonly string[]>)[replyStyle[dimension]]!.map((noun) => ` the ${noun} i `),
    ]);
    let naming = 0;
    for (let index = 0; index < 400; index += 1) {
      const text = composeThanks(random, replyStyle).toLowerCase();
      expect(lacking.filter((part) => text.includes(part.toLowerCase()))).toEqual([]);
      if (had.some((part) => text.includes(part.toLowerCase()))) naming += 1;
    }
    expect(naming).toBeGreaterThan(200);
  });

  it('open complaints and thanks alike with a stakes sentence, so it carries no verdict', () => {
    const random = createSeededRandom(6);
    const opensWithStakes = (text: string) => composedNextStateParts.stakes.some((stake) => text.startsWith(stake));
    let complaints = 0;
    let thanks = 0;
    for (let index = 0; index < 1000; index += 1) {
      if (opensWithStakes(composeComplaint(random, { length: 'long' }, 7))) complaints += 1;
      if (opensWithStakes(composeThanks(random, { formatting: 'plain', length: 'long', tone: 'warm', answerFormat: 'sentence' }))) thanks += 1;
    }
    expect(complaints).toBeGreaterThan(120);
    expect(thanks).toBeGreaterThan(120);
    expect(Math.abs(complaints - thanks)).toBeLessThan(80);
  });

  it('wrap requests in the frames users ask with, and only verb phrases in a question or wish', () => {
    const random = createSeededRandom(8);
    const texts: string[] = [];
    for (let index = 0; index < 3000; index += 1) {
      const dimension = random.pick(styleDimensions);
      texts.push(composeComplaint(random, { [dimension]: random.pick(styleValues[dimension] as readonly string[]) }, 7));
    }
    for (const frame of [/\b(can|could) you \w/i, /\bI want you to\b/, /\bI would like you to\b/, /\bnext time, /i, /\byou need to\b/i]) {
      expect(texts.filter((text) => frame.test(text)).length).toBeGreaterThan(30);
    }
    expect(texts.filter((text) => /\b(can|could) you (no|do not|just a|just the|shorter|less|one or two) /i.test(text))).toEqual([]);
    expect(texts.filter((text) => /\bi (want|would)\b/.test(text))).toEqual([]);
  });

  it('read as sentences: capitalized, ending in punctuation, no doubled spaces', () => {
    const random = createSeededRandom(4);
    for (let index = 0; index < 500; index += 1) {
      const dimension = random.pick(styleDimensions);
      for (const text of [
        composeComplaint(random, { [dimension]: random.pick(styleValues[dimension] as readonly string[]) }, 7),
        composeThanks(random),
        composeNeutral(random),
      ]) {
        expect(text).toMatch(/^[A-Z]/);
        expect(text).toMatch(/[.!?]$/);
        expect(text).not.toContain('  ');
      }
    }
  });
});
