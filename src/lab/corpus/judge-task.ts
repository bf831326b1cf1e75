/**
 * Judge examples: exactly the prompts of `buildJudgePrompt` / `buildHintPrompt` for a tutoring
 * reply and the user's next message, answered with the right verdict.
 *
 * The next message is a complaint asking for other values on one or two style dimensions (the
 * reply then has a different value on each), thanks, or a neutral / unrelated follow-up. Verdicts
 * follow OpenClaw-RL: complaint −1, thanks +1, neutral 0. The hint prompt is answered `\boxed{1}`
 * plus the canonical style hint of the wanted values for complaints (`canonicalStyleHint`), and
 * `\boxed{-1}` otherwise. With `brokenReplyShare` (training split only, off by default) that share
 * of the next states complain about a broken reply instead (cut off, looping, off-task:
 * broken-replies.ts), verdict −1 and no hint.
 */
import type { ChatMessage } from '../../spec/chat.js';
import type { JudgeInput } from '../../spec/judge.js';
import { canonicalStyleHint } from '../../builtin/style-hint.js';
import { buildHintPrompt, buildJudgePrompt, hintEndMarker, hintStartMarker } from '../../core/judge-prompts.js';
import { builtinJudgePromptBudget } from '../../builtin/builtin-judge-options.js';
import type { VoteScore } from '../../core/rl/aggregate-votes.js';
import type { SeededRandom } from '../../core/seeded-random.js';
import { classifyStyle, drawStyle, styleDimensions, styleValues, type StyleChoice, type StyleDimension } from '../../builtin/style.js';
import { userTaskValues } from '../../builtin/user-preference.js';
import { breakReply, brokenReplyReadings, composeBrokenReplyComplaint, replyBreakages, type ReplyBreakage } from './broken-replies.js';
import { composeComplaint, composeNeutral, composeThanks } from './composed-next-states.js';
import { complaintPhrases, nextStatePhrases } from './next-state-phrases.js';
import { writeReply } from './reply-writer.js';
import { buildTutorTask } from './tutor-tasks.js';
import type { CorpusSplit } from '../../rollouts/environments/word-problems.js';

export type NextStateKind = 'complaint' | 'thanks' | 'neutral' | 'broken';
export type JudgePromptKind = 'verdict' | 'hint';

export interface JudgeExample {
  task: 'judge';
  split: CorpusSplit;
  /** The judge prompt followed by the judge's answer. */
  messages: ChatMessage[];
  /** What the prompt was built from, for measuring a whole judge rather than one answer. */
  input: JudgeExampleInput;
  prompt: JudgePromptKind;
  nextKind: NextStateKind;
  /** The box the answer holds. */
  expectedScore: VoteScore;
  /** The values a complaint asks for; empty for thanks and neutral messages. */
  wanted: Partial<StyleChoice>;
  replyStyle: StyleChoice;
  /** The hint in the answer (hint prompts on complaints only). */
  hint: string | null;
  /** How the reply is broken (`broken` next states only). */
  breakage: ReplyBreakage | null;
}

/** A judged turn: the request context, the reply and what the user said next. */
export type JudgeExampleInput = Omit<JudgeInput, 'wantHint'>;

export interface JudgeExampleOptions {
  split: CorpusSplit;
  prompt?: JudgePromptKind;
  nextKind?: NextStateKind;
  systemProbability?: number;
  /** Share of training-split next states that complain about a broken reply (default 0). */
  brokenReplyShare?: number;
}

/**
 * What a complaint asks for, in the judge's own words. The judge states it before its box, so the
 * verdict and the hint follow from an explicit reading of the next state instead of a guess.
 */
const wantedDescriptions: { readonly [D in StyleDimension]: { readonly [V in StyleChoice[D]]: string } } = {
  formatting: { plain: 'plain text without bold or lists', bold: 'the key numbers in bold', numbered: 'numbered steps' },
  length: { short: 'a shorter reply', long: 'a longer, more detailed reply' },
  tone: { warm: 'a warmer, encouraging tone', neutral: 'a neutral tone without praise' },
  answerFormat: { line: 'the answer on its own Answer: line', boxed: 'the answer in a box', sentence: 'the answer in a plain sentence' },
};

export function describeWanted(wanted: Partial<StyleChoice>): string {
  return styleDimensions
    .filter((dimension) => wanted[dimension] !== undefined)
    .map((dimension) => (wantedDescriptions[dimension] as Record<string, string>)[wanted[dimension] as string])
    .join(' and ');
}

const complaintVerdictEndings: readonly string[] = [
  'so the reply missed.',
  'so the reply has to change.',
  'which the reply did not give.',
];

const verdictAnswers: { readonly [K in Exclude<NextStateKind, 'complaint' | 'broken'>]: readonly string[] } = {
  thanks: [
    'The user is satisfied and moves on.',
    'The user thanks the assistant, so the reply worked.',
    'The reply was accepted.',
  ],
  neutral: [
    'The next message does not say whether the reply helped.',
    'The follow-up is unrelated, so the outcome is unclear.',
    'There is no clear signal about the reply.',
  ],
};

/** Share of training-split next states composed from parts rather than taken whole from the list. */
const composedShare = 0.7;

const noHintAnswers: readonly string[] = [
  'The next state asks for no change.',
  'There is nothing to correct in the next state.',
  'The next message carries no correction.',
];

const noStyleHintAnswers: readonly string[] = ['The complaint names no style to change.', 'The user asks for no style, only a working reply.'];

export const judgeContextSystemPrompts: readonly string[] = [
  'You are a helpful math tutor.',
  'You help students and teachers with arithmetic homework.',
  'You are an assistant for school math.',
];

function scoreOf(kind: NextStateKind, prompt: JudgePromptKind): VoteScore {
  if (prompt === 'hint') return kind === 'complaint' ? 1 : -1;
  return kind === 'complaint' || kind === 'broken' ? -1 : kind === 'thanks' ? 1 : 0;
}

/**
 * Share of training complaints that ask only for a longer reply whose reply is one line instead
 * ("Excellent!", "The answer is 12."). A policy under training drifts to such replies, and a judge
 * that had only seen whole tutoring replies read the complaint after them as thanks: the +1 trained
 * the one-liners up and collapsed a personalization run (docs/personalization.md).
 */
const oneLineReplyShare = 0.5;

const oneLineWarmReplies: readonly string[] = ['Excellent!', 'Well done!', 'Great job!', 'Nice work!', 'Wonderful, {answer}!', 'Fantastic, it is {answer}.'];
const oneLineNeutralReplies: readonly string[] = ['The answer is {answer}.', 'Correct.', '{answer}.', 'The solution is right.', 'It is {answer}.', 'Looks right.'];

function oneLineReply(random: SeededRandom, answer: number): string {
  return random.pick(random.chance(0.5) ? oneLineWarmReplies : oneLineNeutralReplies).replaceAll('{answer}', String(answer));
}

/** A reply style whose value differs from the wanted one on every complained-about dimension. */
function violatingStyle(random: SeededRandom, wanted: Partial<StyleChoice>): StyleChoice {
  const fixed: Record<string, string> = {};
  for (const dimension of styleDimensions) {
    const value = wanted[dimension];
    if (value === undefined) continue;
    const others = (styleValues[dimension] as readonly string[]).filter((candidate) => candidate !== value);
    fixed[dimension] = random.pick(others);
  }
  return drawStyle(random, fixed as Partial<StyleChoice>);
}

function isOnlyLonger(wanted: Partial<StyleChoice>): boolean {
  return wanted.length === 'long' && Object.keys(wanted).length === 1;
}

export function generateJudgeExample(random: SeededRandom, options: JudgeExampleOptions): JudgeExample {
  const { split } = options;
  // The held-out split keeps its three kinds, so the judge's held-out figures stay comparable; at
  // share 0 the draws are exactly those of the corpus before broken replies existed.
  const brokenShare = split === 'train' ? (options.brokenReplyShare ?? 0) : 0;
  const kinds: [NextStateKind, number][] = [['complaint', 0.5], ['thanks', 0.3], ['neutral', 0.2]];
  const nextKind =
    options.nextKind ??
    random.weighted<NextStateKind>(
      brokenShare > 0 ? [...kinds.map(([kind, weight]): [NextStateKind, number] => [kind, weight * (1 - brokenShare)]), ['broken', brokenShare]] : kinds,
    );
  const prompt = options.prompt ?? (random.chance(0.5) ? 'verdict' : 'hint');
  const tutor = buildTutorTask(random.pick(userTaskValues), random, split);
  const phrases = nextStatePhrases(split);

  const wanted: Partial<StyleChoice> = {};
  let nextText: string;
  let replyStyle: StyleChoice;
  let breakage: ReplyBreakage | null = null;
  if (nextKind === 'broken') {
    breakage = random.pick(replyBreakages);
    replyStyle = drawStyle(random);
    nextText = composeBrokenReplyComplaint(random, breakage);
  } else if (nextKind === 'complaint') {
    const dimensions: StyleDimension[] = random.shuffle(styleDimensions).slice(0, random.chance(0.35) ? 2 : 1);
    for (const dimension of dimensions) {
      (wanted as Record<string, string>)[dimension] = random.pick(styleValues[dimension] as readonly string[]);
    }
    replyStyle = violatingStyle(random, wanted);
    nextText =
      split === 'train' && random.chance(composedShare)
        ? composeComplaint(random, wanted, tutor.problem.answer)
        : dimensions
            .map((dimension) => random.pick(complaintPhrases(split, dimension, wanted[dimension] as never)))
            .join(' ')
            .replaceAll('{answer}', String(tutor.problem.answer));
  } else {
    replyStyle = drawStyle(random);
    nextText =
      split === 'train' && random.chance(composedShare)
        ? nextKind === 'thanks'
          ? composeThanks(random, replyStyle)
          : composeNeutral(random)
        : random.pick(nextKind === 'thanks' ? phrases.thanks : phrases.neutral);
  }

  const context: ChatMessage[] = [];
  if (random.chance(options.systemProbability ?? 0.25)) {
    context.push({ role: 'system', content: random.pick(judgeContextSystemPrompts) });
  }
  context.push({ role: 'user', content: tutor.userMessage });
  const oneLine = split === 'train' && nextKind === 'complaint' && isOnlyLonger(wanted) && random.chance(oneLineReplyShare);
  let replyText = oneLine ? oneLineReply(random, tutor.problem.answer) : writeReply(tutor.content, replyStyle, random);
  if (breakage !== null) {
    const other = buildTutorTask(random.pick(userTaskValues), random, split);
    replyText = breakReply(random, replyText, writeReply(other.content, drawStyle(random), random), breakage);
  }
  // A one-liner has the style it reads as: plain, short, with a sentence answer and its own tone.
  if (oneLine) replyStyle = { ...classifyStyle(replyText), length: 'short' };
  const input = {
    context,
    response: { role: 'assistant', content: replyText } satisfies ChatMessage,
    nextState: [{ role: 'user', content: nextText } satisfies ChatMessage],
  };

  const expectedScore = scoreOf(nextKind, prompt);
  let hint: string | null = null;
  let answer: string;
  if (prompt === 'verdict') {
    const reading =
      nextKind === 'complaint'
        ? `The user wants ${describeWanted(wanted)}, ${random.pick(complaintVerdictEndings)}`
        : nextKind === 'broken'
          ? brokenReplyReadings[breakage as ReplyBreakage]
          : random.pick(verdictAnswers[nextKind]);
    answer = `${reading} \\boxed{${expectedScore}}`;
  } else if (nextKind === 'complaint') {
    hint = canonicalStyleHint(wanted);
    answer = `The user wants ${describeWanted(wanted)}. \\boxed{1}\n${hintStartMarker}${hint}${hintEndMarker}`;
  } else {
    answer = `${random.pick(nextKind === 'broken' ? noStyleHintAnswers : noHintAnswers)} \\boxed{-1}`;
  }
  const promptMessages = prompt === 'verdict' ? buildJudgePrompt(input, builtinJudgePromptBudget) : buildHintPrompt(input, builtinJudgePromptBudget);
  return {
    task: 'judge',
    split,
    messages: [...promptMessages, { role: 'assistant', content: answer }],
    input,
    prompt,
    nextKind,
    expectedScore,
    wanted,
    replyStyle,
    hint,
    breakage,
  };
}
