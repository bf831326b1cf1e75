import { describe, expect, it } from 'vitest';
import { splitHint } from '../../core/hint.js';
import { parseStyleHint } from '../../builtin/style-hint.js';
import { createSeededRandom } from '../../core/seeded-random.js';
import { classifyStyle, countWords, styleDimensions, styleValues } from '../../builtin/style.js';
import { builtinUsers, satisfiesPreference, userTaskValues } from '../../builtin/user-preference.js';
import {
  firstMessages,
  generateCorpus,
  generateExample,
  taskWeightsWithJudgeShare,
  type CorpusExample,
  type StyleExample,
} from './corpus-generator.js';
import { heldoutNames, trainNames } from '../../rollouts/environments/word-problems.js';

const isStyleExample = (example: CorpusExample): example is StyleExample => example.task !== 'judge';
const replyOf = (example: CorpusExample): string => example.messages.at(-1)?.content ?? '';
const userOf = (example: CorpusExample): string =>
  [...example.messages].reverse().find((message) => message.role === 'user')?.content ?? '';

const trainCorpus = generateCorpus({ seed: 1, count: 4000, split: 'train', taskWeights: { judge: 0 } });
const trainStyle = trainCorpus.filter(isStyleExample);

describe('generateCorpus', () => {
  it('is deterministic per seed, split and index', () => {
    const first = generateCorpus({ seed: 'abc', count: 30, split: 'train' });
    expect(generateCorpus({ seed: 'abc', count: 30, split: 'train' })).toEqual(first);
    expect(generateCorpus({ seed: 'abd', count: 30, split: 'train' })).not.toEqual(first);
    expect(generateCorpus({ seed: 'abc', count: 10, split: 'train', offset: 20 })).toEqual(first.slice(20));
  });

  it('mixes all four tasks by the default weights', () => {
    const corpus = generateCorpus({ seed: 2, count: 1000, split: 'train' });
    const counts = new Map<string, number>();
    for (const example of corpus) counts.set(example.task, (counts.get(example.task) ?? 0) + 1);
    expect(counts.get('solve')).toBeGreaterThan(200);
    expect(counts.get('grade')).toBeGreaterThan(140);
    expect(counts.get('comment')).toBeGreaterThan(140);
    expect(counts.get('judge')).toBeGreaterThan(300);
  });

  it('takes a judge share and keeps the tutoring tasks in proportion', () => {
    const weights = taskWeightsWithJudgeShare(0.7);
    expect(weights.judge).toBe(0.7);
    expect(weights.solve + weights.grade + weights.comment + weights.judge).toBeCloseTo(1, 10);
    expect(weights.solve / weights.grade).toBeCloseTo(0.25 / 0.2, 10);
    const corpus = generateCorpus({ seed: 3, count: 1000, split: 'train', taskWeights: weights });
    const judged = corpus.filter((example) => example.task === 'judge').length;
    expect(judged).toBeGreaterThan(650);
    expect(judged).toBeLessThan(750);
  });

  it('ends every transcript with an assistant reply after a user message', () => {
    for (const example of generateCorpus({ seed: 3, count: 300, split: 'heldout' })) {
      const roles = example.messages.map((message) => message.role);
      expect(roles.at(-1)).toBe('assistant');
      expect(roles.at(-2)).toBe('user');
      expect(roles.slice(0, -2).every((role) => role === 'system')).toBe(true);
    }
  });
});

describe('tutoring replies', () => {
  it('read back as exactly the requested style', () => {
    expect(trainStyle.length).toBe(4000);
    for (const example of trainStyle) {
      expect(classifyStyle(replyOf(example)), replyOf(example)).toEqual(example.style);
    }
  });

  it('keep short replies under 40 words and long ones between 101 and 200', () => {
    for (const example of trainStyle) {
      const words = countWords(replyOf(example));
      if (example.style.length === 'short') expect(words).toBeLessThan(40);
      else {
        expect(words).toBeGreaterThan(100);
        expect(words).toBeLessThanOrEqual(200);
      }
    }
  });

  it('obey their hints, which are in the hint format and name the hinted values', () => {
    const hinted = trainStyle.filter((example) => example.hint !== null);
    expect(hinted.length / trainStyle.length).toBeGreaterThan(0.45);
    expect(hinted.length / trainStyle.length).toBeLessThan(0.55);
    const dimensionCounts = new Set<number>();
    for (const example of hinted) {
      expect(splitHint(userOf(example))).toEqual({ text: example.userMessage, hint: example.hint });
      expect(parseStyleHint(example.hint ?? '')).toEqual(example.hinted);
      for (const dimension of styleDimensions) {
        const wanted = example.hinted[dimension];
        if (wanted !== undefined) expect(example.style[dimension]).toBe(wanted);
      }
      dimensionCounts.add(Object.keys(example.hinted).length);
    }
    expect([...dimensionCounts].sort()).toEqual([1, 2, 3]);
    for (const example of trainStyle.filter((candidate) => candidate.hint === null)) {
      expect(splitHint(userOf(example)).hint).toBeNull();
      expect(example.hinted).toEqual({});
    }
  });

  it('draw every style value between 20% and 80% of the time without a hint', () => {
    const random = createSeededRandom(99);
    const samples = Array.from({ length: 2000 }, () =>
      generateExample(random, { split: 'train', task: random.pick(userTaskValues), hintProbability: 0 }),
    );
    for (const dimension of styleDimensions) {
      for (const value of styleValues[dimension]) {
        const share = samples.filter((sample) => classifyStyle(replyOf(sample))[dimension] === value).length / 2000;
        expect(share, `${dimension}=${value}`).toBeGreaterThan(0.2);
        expect(share, `${dimension}=${value}`).toBeLessThan(0.8);
      }
    }
  });

  it('satisfy each built-in user exactly when the style says so', () => {
    for (const example of trainStyle) {
      const reply = replyOf(example);
      const { formatting, answerFormat, length, tone } = example.style;
      expect(satisfiesPreference(builtinUsers.student.preference, reply)).toBe(formatting === 'plain' && answerFormat !== 'boxed');
      expect(satisfiesPreference(builtinUsers.ta.preference, reply)).toBe(length === 'long');
      expect(satisfiesPreference(builtinUsers.teacher.preference, reply)).toBe(tone === 'warm');
    }
  });

  it('state the correct answer in the reply', () => {
    for (const example of trainStyle.slice(0, 1000)) {
      expect(replyOf(example)).toMatch(new RegExp(`(^|[^\\d])${example.answer}([^\\d]|$)`));
    }
  });
});

describe('held-out split', () => {
  it('never repeats a training prompt and uses only held-out names', () => {
    const trainPrompts = new Set(trainStyle.map((example) => example.userMessage));
    const heldout = generateCorpus({ seed: 1, count: 1500, split: 'heldout', taskWeights: { judge: 0 } }).filter(isStyleExample);
    for (const example of heldout) {
      expect(trainPrompts.has(example.userMessage)).toBe(false);
      expect(trainNames.some((name) => new RegExp(`\\b${name}\\b`).test(example.userMessage))).toBe(false);
      expect(heldoutNames.some((name) => example.userMessage.includes(name))).toBe(true);
    }
  });
});

describe('firstMessages', () => {
  it('gives deterministic, hint-free held-out first messages for each task', () => {
    for (const task of userTaskValues) {
      const messages = firstMessages({ task, seed: 5, count: 60 });
      expect(messages).toHaveLength(60);
      expect(firstMessages({ task, seed: 5, count: 10 })).toEqual(messages.slice(0, 10));
      expect(new Set(messages).size).toBeGreaterThan(55);
      for (const message of messages) {
        expect(splitHint(message).hint).toBeNull();
        expect(trainNames.some((name) => new RegExp(`\\b${name}\\b`).test(message))).toBe(false);
      }
    }
    expect(firstMessages({ task: 'grade', seed: 5, count: 3 })[0]).toMatch(/^(Please grade|Grade|Is this)/);
    expect(firstMessages({ task: 'comment', seed: 6, count: 5 })).not.toEqual(firstMessages({ task: 'comment', seed: 5, count: 5 }));
  });
});
