/**
 * The four style dimensions every reply of the built-in model varies along, and classifiers that
 * read them back from any reply text. The simulated users, the style hints, the judge's training
 * data and the corpus generator all agree on these definitions, so they live in one place.
 *
 * Definitions (words are whitespace-separated tokens):
 * - formatting: `bold` when the text contains `**...**` on one line; else `numbered` when some line
 *   starts with `1.`, `2)` and the like followed by a space; else `plain`.
 * - length: `short` below 40 words, `long` above 100 words, `medium` in between (never generated).
 * - tone: `warm` when the text contains one of `warmPhrases` (case-insensitive); else `neutral`.
 * - answer format: `boxed` when it contains `\boxed{...}`; else `line` when some line is exactly
 *   `Answer: N` (bold markers tolerated); else `sentence` (the number is stated in prose).
 */
import type { SeededRandom } from '../core/seeded-random.js';
import { countWords } from '../judge/text-rule.js';

/** Words as the word-count rules of `--judge rules` count them, so `short` and `maxWords` agree. */
export { countWords };

export const formattingValues = ['bold', 'numbered', 'plain'] as const;
export const lengthValues = ['short', 'long'] as const;
export const toneValues = ['warm', 'neutral'] as const;
export const answerFormatValues = ['line', 'boxed', 'sentence'] as const;

export type Formatting = (typeof formattingValues)[number];
/** The lengths a reply is asked for; a classified text can also be `medium`. */
export type LengthChoice = (typeof lengthValues)[number];
export type LengthClass = LengthChoice | 'medium';
export type Tone = (typeof toneValues)[number];
export type AnswerFormat = (typeof answerFormatValues)[number];

/** One value per dimension: what a reply is asked to look like. */
export interface StyleChoice {
  formatting: Formatting;
  length: LengthChoice;
  tone: Tone;
  answerFormat: AnswerFormat;
}

export type StyleDimension = keyof StyleChoice;

/** What a text actually looks like. */
export interface StyleClassification {
  formatting: Formatting;
  length: LengthClass;
  tone: Tone;
  answerFormat: AnswerFormat;
}

export const styleDimensions: readonly StyleDimension[] = ['formatting', 'length', 'tone', 'answerFormat'];

export const styleValues: { readonly [D in StyleDimension]: readonly StyleChoice[D][] } = {
  formatting: formattingValues,
  length: lengthValues,
  tone: toneValues,
  answerFormat: answerFormatValues,
};

/** Fewer words than this is `short`. */
export const shortWordLimit = 40;
/** More words than this is `long`. */
export const longWordLimit = 100;

/**
 * A reply is warm exactly when it contains one of these (case-insensitive). The teacher user's
 * preference and the corpus's warm replies use this same list, so keep neutral templates free of
 * every entry.
 */
export const warmPhrases: readonly string[] = [
  'well done!',
  'excellent!',
  'great job',
  'wonderful',
  'nice work',
  'fantastic',
  'keep up the great work',
  'you should be proud',
  'brilliant',
];

export const boldPattern = /\*\*[^*\n]+\*\*/;
export const numberedLinePattern = /^[ \t]*\d+[.)][ \t]+\S/m;
export const boxedPattern = /\\boxed\{[^{}\n]*\}/;
export const answerLinePattern =
  /^[ \t]*(?:\*\*)?Answer:(?:\*\*)?[ \t]*(?:\*\*)?[-+]?\$?\d[\d,]*(?:\.\d+)?(?:\*\*)?\.?[ \t]*$/im;

export function classifyFormatting(text: string): Formatting {
  if (boldPattern.test(text)) return 'bold';
  if (numberedLinePattern.test(text)) return 'numbered';
  return 'plain';
}

export function classifyLength(text: string): LengthClass {
  const words = countWords(text);
  if (words < shortWordLimit) return 'short';
  if (words > longWordLimit) return 'long';
  return 'medium';
}

export function classifyTone(text: string): Tone {
  const lower = text.toLowerCase();
  return warmPhrases.some((phrase) => lower.includes(phrase)) ? 'warm' : 'neutral';
}

export function classifyAnswerFormat(text: string): AnswerFormat {
  if (boxedPattern.test(text)) return 'boxed';
  if (answerLinePattern.test(text)) return 'line';
  return 'sentence';
}

export function classifyStyle(text: string): StyleClassification {
  return {
    formatting: classifyFormatting(text),
    length: classifyLength(text),
    tone: classifyTone(text),
    answerFormat: classifyAnswerFormat(text),
  };
}

/** The dimensions where `text` differs from the requested values (empty when it matches). */
export function styleMismatches(text: string, requested: Partial<StyleChoice>): StyleDimension[] {
  const actual = classifyStyle(text);
  return styleDimensions.filter((dimension) => {
    const wanted = requested[dimension];
    return wanted !== undefined && actual[dimension] !== wanted;
  });
}

/** A style with the given values fixed and every other dimension drawn uniformly. */
export function drawStyle(random: SeededRandom, fixed: Partial<StyleChoice> = {}): StyleChoice {
  return {
    formatting: fixed.formatting ?? random.pick(formattingValues),
    length: fixed.length ?? random.pick(lengthValues),
    tone: fixed.tone ?? random.pick(toneValues),
    answerFormat: fixed.answerFormat ?? random.pick(answerFormatValues),
  };
}
