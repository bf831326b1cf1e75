import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSeededRandom, deriveSeed } from '../../core/seeded-random.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { generateJudgeExample, type NextStateKind } from '../corpus/judge-task.js';
import { generateJudgeCorpusExample } from '../corpus/judge-corpus.js';
import { nextStatePhrases } from '../corpus/next-state-phrases.js';
import { styleDimensions } from '../../builtin/style.js';
import { nextStateText, parseHeldoutNextStates, shippedHeldoutKinds } from './judge-heldout-set.js';

const shippedFile = path.join(import.meta.dirname, '..', '..', '..', 'models', 'builtin-tiny', 'judge-heldout.jsonl');
const rows = parseHeldoutNextStates(readFileSync(shippedFile, 'utf8'), shippedFile);

/** Lowercase words, punctuation dropped (apostrophes kept inside words). */
const words = (text: string) => text.toLowerCase().replace(/[^a-z0-9'\s]+/g, ' ').split(/\s+/).filter((word) => word !== '');
const runLength = 5;
function runsOf(text: string): string[] {
  const list = words(text);
  return Array.from({ length: Math.max(0, list.length - runLength + 1) }, (_, start) => list.slice(start, start + runLength).join(' '));
}

/**
 * Every next state the corpora write over many seeds: the shared corpus's judge task (each kind,
 * broken replies too), the judge-only corpus of builtin:tiny-judge (judge-corpus.ts, every kind),
 * and both phrase lists.
 */
function corpusNextStates(): string[] {
  const kinds: NextStateKind[] = ['complaint', 'thanks', 'neutral'];
  const texts = Array.from({ length: 12_000 }, (_, index) => {
    const random = createSeededRandom(deriveSeed(1, 'corpus', 'train', index));
    const example = generateJudgeExample(random, { split: 'train', prompt: 'verdict', brokenReplyShare: 0.25, ...(index % 4 === 3 ? {} : { nextKind: kinds[index % 4] }) });
    return example.input.nextState.map((message) => message.content).join(' ');
  });
  for (let index = 0; index < 12_000; index += 1) {
    const example = generateJudgeCorpusExample(createSeededRandom(deriveSeed(1, 'corpus', 'train', index)), { split: 'train', prompt: 'verdict' });
    texts.push(example.input.nextState.map((message) => message.content).join(' '));
  }
  for (const split of ['train', 'heldout'] as const) {
    const phrases = nextStatePhrases(split);
    texts.push(...phrases.thanks, ...phrases.neutral);
    for (const dimension of styleDimensions) texts.push(...Object.values<readonly string[]>(phrases.complaints[dimension] as Record<string, readonly string[]>).flat());
  }
  return texts;
}

describe('the shipped held-out next states', () => {
  it('hold at least 200 rows, 50 of them explicit corrections, every shipped kind with its verdict', () => {
    expect(rows.length).toBeGreaterThanOrEqual(200);
    expect(rows.filter((row) => row.kind === 'correction').length).toBeGreaterThanOrEqual(50);
    const negative = new Set(['correction', 'complaint', 'complaint-with-thanks', 'negated-praise', 'tool-error']);
    for (const row of rows) {
      expect(shippedHeldoutKinds).toContain(row.kind);
      expect(row.expected, row.id).toBe(negative.has(row.kind) ? -1 : 1);
      expect(row.input.nextState[0]?.role, row.id).toBe(row.kind.startsWith('tool-') ? 'tool' : 'user');
    }
    for (const kind of shippedHeldoutKinds) expect(rows.filter((row) => row.kind === kind).length, kind).toBeGreaterThanOrEqual(15);
    expect(new Set(rows.map((row) => nextStateText(row).toLowerCase())).size).toBeGreaterThan(rows.length * 0.9);
  });

  it('the issue\'s own examples are among them', () => {
    const texts = rows.map((row) => nextStateText(row));
    for (const text of ['That is wrong.', "That's not what I asked.", 'Wrong again, try once more.']) expect(texts).toContain(text);
    expect(texts.some((text) => /^No — \d+, not \d+\.$/.test(text))).toBe(true);
  });

  it('share no sentence and no five-word run with what the training corpus writes', () => {
    const corpus = corpusNextStates();
    const whole = new Set(corpus.map((text) => words(text).join(' ')));
    const runs = new Set(corpus.flatMap(runsOf));
    const shared = rows.flatMap((row) => {
      const text = nextStateText(row);
      const found = [...(whole.has(words(text).join(' ')) ? ['the whole sentence'] : []), ...runsOf(text).filter((run) => runs.has(run))];
      return found.length === 0 ? [] : [`${row.id} ${JSON.stringify(text)}: ${found.join(', ')}`];
    });
    expect(shared).toEqual([]);
  });
});

describe('parseHeldoutNextStates', () => {
  const line = (fields: Record<string, unknown>) =>
    JSON.stringify({ id: 'a', kind: 'thanks', expected: 1, context: [{ role: 'user', content: 'Hi' }], response: { role: 'assistant', content: 'Hello' }, nextState: [{ role: 'user', content: 'Thanks' }], ...fields });

  it('reads rows and skips blank lines', () => {
    const parsed = parseHeldoutNextStates(`${line({})}\n\n${line({ id: 'b', expected: -1 })}\n`, 'x.jsonl');
    expect(parsed.map((row) => [row.id, row.expected])).toEqual([['a', 1], ['b', -1]]);
    expect(parsed[0]?.input.nextState).toEqual([{ role: 'user', content: 'Thanks' }]);
  });

  it.each([
    ['a verdict out of range', line({ expected: 2 }), 'line 1'],
    ['no next state', line({ nextState: [] }), 'line 1'],
    ['broken JSON', '{"id":', 'line 1'],
    ['a repeated id', `${line({})}\n${line({})}`, 'used twice'],
    ['an empty file', '\n', 'holds no'],
  ])('refuses %s with a configuration error', (_name, text, message) => {
    expect(() => parseHeldoutNextStates(text, 'x.jsonl')).toThrow(ClawrlError);
    expect(() => parseHeldoutNextStates(text, 'x.jsonl')).toThrow(message);
  });
});
