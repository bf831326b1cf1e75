/**
 * The style hints of the built-in model: the phrasings it learns to obey (one sentence per style
 * value, written in the format of `src/core/hint.ts`), and a reader that tells which style values
 * a hint asks for. The built-in judge's hint filter (`builtin-hint-filter.ts`) and the corpus use
 * both; no other judge reads hints this way.
 */
import type { SeededRandom } from '../core/seeded-random.js';
import { styleDimensions, styleMismatches, type StyleChoice, type StyleDimension } from './style.js';

type HintPhrasings = { readonly [D in StyleDimension]: { readonly [V in StyleChoice[D]]: readonly string[] } };

/**
 * One sentence per phrasing, each naming exactly one dimension, so several can be joined into a
 * multi-dimension hint and still be read back by `parseStyleHint`.
 */
export const styleHintPhrasings: HintPhrasings = {
  formatting: {
    bold: [
      'Use bold text for the key numbers.',
      'Please put the important numbers in bold.',
      'Highlight the key results in bold.',
      'Make the main numbers bold so they stand out.',
    ],
    numbered: [
      'Lay out the steps as a numbered list.',
      'Please use a numbered list for the steps.',
      'Number each step.',
      'Write the working as numbered steps.',
    ],
    plain: [
      "Please don't use bold text or numbered lists.",
      'Write plain prose, with no bold and no numbered lists.',
      'No formatting please, no bold and no lists.',
      'Avoid bold text and numbered lists.',
    ],
  },
  length: {
    short: [
      'Keep it short.',
      'Please be brief, under 40 words.',
      'Keep the reply brief.',
      'Short and to the point, please.',
    ],
    long: [
      'Write at least 100 words.',
      'Please explain in detail, using more than 100 words.',
      'Give a long, thorough explanation.',
      'Make the reply detailed, over 100 words.',
    ],
  },
  tone: {
    warm: [
      'Be warm and encouraging.',
      'Please use a friendly, encouraging tone.',
      'Sound warm and cheerful, like a proud teacher.',
      'Add some warm encouragement, such as well done!',
    ],
    neutral: [
      'Keep the tone neutral and matter-of-fact.',
      'Use a neutral tone, without praise.',
      'Stay factual and skip the praise.',
    ],
  },
  answerFormat: {
    line: [
      'End with a separate line of the form Answer: N.',
      'Put the final answer on its own line as Answer: N.',
      'Finish with a line that reads Answer: followed by the number.',
    ],
    boxed: [
      'Put the final answer in \\boxed{}.',
      'Give the final answer as \\boxed{N}.',
      'Wrap the final number in \\boxed{}.',
    ],
    sentence: [
      'State the final answer in a normal sentence.',
      'Give the final answer in a sentence, without a box or an Answer: line.',
      'Just say the answer in a plain sentence.',
    ],
  },
};

/** The phrasings of one dimension value (typed access for callers holding a dimension name). */
export function phrasingsOf<D extends StyleDimension>(dimension: D, value: StyleChoice[D]): readonly string[] {
  const byValue = styleHintPhrasings[dimension] as Record<string, readonly string[]>;
  return byValue[value] ?? [];
}

/**
 * The one fixed wording of a hint asking for the given values: the first phrasing of each value,
 * in dimension order. The built-in judge writes its hints this way, so the hint is a lookup of
 * the reading it has just stated ("The user wants …") rather than a second, independent guess
 * among a dozen wordings, which a model this small gets wrong more often than the reading.
 * Empty choices give an empty string.
 */
export function canonicalStyleHint(choices: Partial<StyleChoice>): string {
  return styleDimensions
    .filter((dimension) => choices[dimension] !== undefined)
    .map((dimension) => phrasingsOf(dimension, choices[dimension] as StyleChoice[typeof dimension])[0] ?? '')
    .join(' ');
}

/**
 * A hint asking for the given values, one sentence per dimension in random order with a random
 * phrasing each. Empty choices give an empty string.
 */
export function styleHintText(choices: Partial<StyleChoice>, random: SeededRandom): string {
  const dimensions = random.shuffle(styleDimensions.filter((dimension) => choices[dimension] !== undefined));
  return dimensions
    .map((dimension) => random.pick(phrasingsOf(dimension, choices[dimension] as StyleChoice[typeof dimension])))
    .join(' ');
}

const negationPattern =
  /\b(?:no|not|never|without|avoid|avoiding|skip|drop|stop|less|fewer|lose|remove|dislikes?|hates?|too much|too many)\b|n't\b/g;
const contrastPattern = /\b(?:but|instead|rather|just|only)\b/;

/** Whether a negation word comes before `index` in the clause with no contrast word after it. */
function isNegated(clause: string, index: number): boolean {
  const before = clause.slice(0, index);
  let lastNegation = -1;
  for (const match of before.matchAll(negationPattern)) lastNegation = match.index + match[0].length;
  if (lastNegation < 0) return false;
  return !contrastPattern.test(before.slice(lastNegation));
}

/** Occurrences of `pattern` in the clause, split into negated and not negated. */
function mentions(clause: string, pattern: RegExp): { positive: boolean; negated: boolean } {
  let positive = false;
  let negated = false;
  const global = new RegExp(pattern.source, 'g');
  for (const match of clause.matchAll(global)) {
    if (isNegated(clause, match.index)) negated = true;
    else positive = true;
  }
  return { positive, negated };
}

function readFormatting(clause: string): StyleChoice['formatting'] | undefined {
  const plainPattern = /\bplain (?:prose|text|paragraphs?|style)\b|\b(?:no|without any|without) (?:special |fancy )?formatting\b/;
  if (plainPattern.test(clause)) return 'plain';
  const numbered = mentions(
    clause,
    /\bnumbered\b|\bnumber (?:each|every|all|the|your) (?:step|line)s?\b|\blist of steps\b/,
  );
  const bold = mentions(clause, /\bbold\b/);
  const lists = mentions(clause, /\blists?\b|\bformatting\b|\bmarkdown\b/);
  if (numbered.positive) return 'numbered';
  if (bold.positive) return 'bold';
  if (numbered.negated || bold.negated || lists.negated) return 'plain';
  return undefined;
}

function readLength(clause: string): StyleChoice['length'] | undefined {
  if (/\btoo (?:short|brief|thin|terse)\b/.test(clause)) return 'long';
  if (/\btoo (?:long|wordy)\b/.test(clause)) return 'short';
  const atMost = /\b(?:under|below|fewer than|less than|at most|no more than|not more than) \d+ words\b/;
  if (atMost.test(clause)) return 'short';
  const atLeast = mentions(clause, /\b(?:at least|more than|over|above) \d+ words\b/);
  if (atLeast.positive) return 'long';
  const short = mentions(clause, /\bshort(?:er)?\b|\bbrief(?:ly)?\b|\bconcise\b|\bto the point\b/);
  const long = mentions(
    clause,
    /\blong(?:er)?\b|\bin (?:more )?detail\b|\bdetailed\b|\bthorough(?:ly)?\b|\bexpand\b|\belaborate\b/,
  );
  if (short.positive) return 'short';
  if (long.positive) return 'long';
  if (short.negated) return 'long';
  if (long.negated) return 'short';
  return undefined;
}

function readTone(clause: string): StyleChoice['tone'] | undefined {
  if (mentions(clause, /\bneutral\b|\bmatter-of-fact\b|\bfactual\b|\bbusinesslike\b|\bjust the facts\b/).positive) {
    return 'neutral';
  }
  const warm = mentions(
    clause,
    /\bwarm(?:er|th)?\b|\bencourag\w*|\bfriendl\w*|\bkinder\b|\bkindly\b|\bkindness\b|\bcheerful\b|\bsupportive\b|\bpraise\b|\bwell done\b|\bupbeat\b/,
  );
  if (warm.positive) return 'warm';
  if (warm.negated || mentions(clause, /\b(?:cheerleading|compliments|flattery|enthusiasm|gushing)\b/).negated) {
    return 'neutral';
  }
  return undefined;
}

function readAnswerFormat(clause: string): StyleChoice['answerFormat'] | undefined {
  const sentence = mentions(clause, /\bsentence\b|\bin words\b|\binto the prose\b/);
  const boxed = mentions(clause, /\\boxed\b|\bbox(?:ed)?\b/);
  const line = mentions(clause, /\banswer:|\banswer line\b|\bown line\b|\bseparate line\b|\blast line\b/);
  if (sentence.positive) return 'sentence';
  if (boxed.positive) return 'boxed';
  if (line.positive) return 'line';
  // Ruling out two of the three formats leaves the third.
  if (boxed.negated && line.negated) return 'sentence';
  if (boxed.negated && sentence.negated) return 'line';
  if (line.negated && sentence.negated) return 'boxed';
  return undefined;
}

/**
 * Which style values a hint asks for. A heuristic reader for the project's own phrasings and
 * plainly worded hints from other judges: clauses are read one by one, negations ("no bold",
 * "don't box") count against a value, and the first clause that settles a dimension wins.
 * Dimensions the hint does not settle are absent.
 */
export function parseStyleHint(hintText: string): Partial<StyleChoice> {
  const result: Partial<StyleChoice> = {};
  const clauses = hintText
    .toLowerCase()
    .replace(/’/g, "'")
    .split(/[.!?;\n]+/)
    .map((clause) => clause.trim())
    .filter((clause) => clause !== '');
  for (const clause of clauses) {
    result.formatting ??= readFormatting(clause);
    result.length ??= readLength(clause);
    result.tone ??= readTone(clause);
    result.answerFormat ??= readAnswerFormat(clause);
  }
  for (const dimension of styleDimensions) if (result[dimension] === undefined) delete result[dimension];
  return result;
}

/**
 * Whether a judge's hint asks the reply to change. A hint that asks only for style values the
 * reply already has cannot be the correction its user asked for: the built-in judge can read
 * "Nobody boxes their answer" under a boxed answer as "Put the final answer in \\boxed{}.", and
 * distilling that hint teaches the policy to box. A hint that names no style value this reader
 * knows is taken as asking for a change.
 */
export function hintAsksForChange(hint: string, reply: string): boolean {
  const asked = parseStyleHint(hint);
  if (Object.keys(asked).length === 0) return true;
  return styleMismatches(reply, asked).length > 0;
}
