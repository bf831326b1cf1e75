/**
 * Writes an assistant reply from task content in a requested style. The output is built so that
 * `classifyStyle` reads back exactly the requested values:
 * - bold marks key values with `**`; numbered puts the core sentences on `1.`, `2.` lines; plain
 *   writes prose (no line ever starts with a number followed by a dot);
 * - short replies keep only the core (under 40 words); long ones add details and general remarks
 *   until they pass 100 words;
 * - warm replies always open with a phrase from `warmPhrases`; neutral text uses none of them;
 * - the answer is an `Answer: N` line, a `\boxed{N}` sentence, or a plain sentence.
 */
import type { SeededRandom } from '../../core/seeded-random.js';
import { countWords, longWordLimit, shortWordLimit, type StyleChoice } from '../../builtin/style.js';
import type { Mark, MarkedSentence } from '../../rollouts/environments/word-problems.js';

export interface ReplyContent {
  /** The essential sentences, at least two; each marks at least one key value. */
  core: MarkedSentence[];
  /** Extra sentences for long replies, most relevant first. */
  details: string[];
  answer: number;
  /** Leads a boxed answer, e.g. "The correct answer is". */
  answerLead: string;
  /** The answer stated in prose; each contains the number. */
  answerSentences: string[];
  neutralOpeners: string[];
  /** Each contains a phrase from `warmPhrases`. */
  warmOpeners: string[];
  /** Each contains a phrase from `warmPhrases`. */
  warmClosers: string[];
}

/** Task-independent remarks that pad long replies; none contains a warm phrase. */
export const generalRemarks: readonly string[] = [
  'Writing down what is known and what is asked makes word problems much easier.',
  'Reading the question a second time after solving it is a good way to catch slips.',
  'Keeping the units next to each number helps to avoid mixing things up.',
  'A quick estimate before calculating shows whether the final result is reasonable.',
  'The same method works for bigger numbers, only the arithmetic takes a little longer.',
  'Drawing a small sketch of the situation can make the relationships clearer.',
  'Each step follows from the one before, so it is easy to retrace the reasoning.',
  'It also helps to say the story out loud in your own words before choosing an operation.',
];

const present = (part: string | null | undefined): part is string => part !== null && part !== undefined;
const bold: Mark = (text) => `**${text}**`;
const unmarked: Mark = (text) => text;

interface AnswerPart {
  sentence: string | null;
  line: string | null;
}

function answerPart(content: ReplyContent, style: StyleChoice, random: SeededRandom): AnswerPart {
  switch (style.answerFormat) {
    case 'line':
      return { sentence: null, line: `Answer: ${content.answer}` };
    case 'boxed':
      return {
        sentence: random.pick([
          `${content.answerLead} \\boxed{${content.answer}}.`,
          `Final answer: \\boxed{${content.answer}}.`,
        ]),
        line: null,
      };
    case 'sentence':
      return { sentence: random.pick(content.answerSentences), line: null };
  }
}

interface ReplyParts {
  opener: string | null;
  core: string[];
  details: string[];
  answerSentence: string | null;
  answerLine: string | null;
  closer: string | null;
}

function assemble(parts: ReplyParts, style: StyleChoice): string {
  const blocks: string[] = [];
  const [intro, ...rest] = parts.details;
  if (style.formatting === 'numbered') {
    const lead = [parts.opener, intro].filter(present);
    if (lead.length > 0) blocks.push(lead.join(' '));
    blocks.push(parts.core.map((sentence, index) => `${index + 1}. ${sentence}`).join('\n'));
    if (rest.length > 0) blocks.push(rest.join(' '));
  } else {
    const opening = [parts.opener, intro, ...parts.core].filter(present);
    blocks.push(opening.join(' '));
    if (rest.length > 0) blocks.push(rest.join(' '));
  }
  const ending = [parts.answerSentence, parts.closer].filter(present);
  if (ending.length > 0) {
    // Short replies stay one compact block; long ones get a closing paragraph.
    const compact = parts.details.length === 0 && style.formatting !== 'numbered';
    if (compact) blocks[blocks.length - 1] += ` ${ending.join(' ')}`;
    else blocks.push(ending.join(' '));
  }
  if (parts.answerLine !== null) blocks.push(parts.answerLine);
  return blocks.join('\n\n');
}

export function writeReply(content: ReplyContent, style: StyleChoice, random: SeededRandom): string {
  const mark = style.formatting === 'bold' ? bold : unmarked;
  const answer = answerPart(content, style, random);
  const warm = style.tone === 'warm';
  const parts: ReplyParts = {
    opener: warm ? random.pick(content.warmOpeners) : random.chance(0.5) ? random.pick(content.neutralOpeners) : null,
    core: content.core.map((sentence) => sentence(mark)),
    details: [],
    answerSentence: answer.sentence,
    answerLine: answer.line,
    closer: null,
  };
  if (style.length === 'short') {
    const text = assemble(parts, style);
    if (countWords(text) < shortWordLimit) return text;
    // Over the limit, the opener shrinks to the fewest words that keep the tone.
    const shortestWarm = [...content.warmOpeners].sort((a, b) => countWords(a) - countWords(b))[0] ?? null;
    return assemble({ ...parts, opener: warm ? shortestWarm : null }, style);
  }
  if (warm && random.chance(0.7)) parts.closer = random.pick(content.warmClosers);
  const [firstDetail, ...otherDetails] = content.details;
  const pool = [
    ...(firstDetail === undefined ? [] : [firstDetail]),
    ...random.shuffle(otherDetails),
    ...random.shuffle(generalRemarks),
  ];
  // Long replies vary in length above the limit instead of stopping right at 101 words.
  const extra = random.integer(0, 2);
  let text = assemble(parts, style);
  let overLimitAdditions = 0;
  for (const sentence of pool) {
    if (countWords(text) > longWordLimit && overLimitAdditions >= extra) break;
    if (countWords(text) > longWordLimit) overLimitAdditions += 1;
    parts.details.push(sentence);
    text = assemble(parts, style);
  }
  return text;
}
