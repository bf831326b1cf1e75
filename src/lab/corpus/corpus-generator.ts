/**
 * The built-in model's training corpus: deterministic, seeded ChatML-ready transcripts (message
 * lists; the tokenizer's chat template renders them). Four tasks: `solve`, `grade` and `comment`
 * (tutoring replies in varied styles, following a style hint when the user message carries one)
 * and `judge` (the PRM's own prompts with the right verdict), so the built-in model can serve,
 * follow OPD hints and judge itself.
 *
 * Without a hint every style value is drawn uniformly. With a hint (half of the tutoring examples
 * by default; one to three dimensions, in the hint format of `core/hint.ts`) the reply follows
 * the hinted values and draws the rest.
 *
 * Example `i` of a corpus depends only on (seed, split, i), so corpora can be regenerated in part
 * or in parallel. The held-out split uses disjoint names (see word-problems.ts) and differently
 * worded next states for the judge (see next-state-phrases.ts).
 */
import type { ChatMessage } from '../../spec/chat.js';
import { appendHint } from '../../core/hint.js';
import { canonicalStyleHint, styleHintText } from '../../builtin/style-hint.js';
import { createSeededRandom, deriveSeed, type SeededRandom } from '../../core/seeded-random.js';
import { drawStyle, styleDimensions, styleValues, type StyleChoice } from '../../builtin/style.js';
import type { UserTask } from '../../builtin/user-preference.js';
import { agentShapedPrompt } from './agent-prompts.js';
import { generateJudgeExample, type JudgeExample } from './judge-task.js';
import { writeReply } from './reply-writer.js';
import { buildTutorTask } from './tutor-tasks.js';
import type { CorpusSplit } from '../../rollouts/environments/word-problems.js';

export type CorpusTask = UserTask | 'judge';

export interface StyleExample {
  task: UserTask;
  split: CorpusSplit;
  /** Optional system message, the user message (with the hint, if any) and the reply. */
  messages: ChatMessage[];
  /** The style the reply is written in. */
  style: StyleChoice;
  /** The values the hint asks for; empty without a hint. */
  hinted: Partial<StyleChoice>;
  hint: string | null;
  /** The user message without the hint. */
  userMessage: string;
  answer: number;
}

export type CorpusExample = StyleExample | JudgeExample;

export const defaultTaskWeights: { readonly [T in CorpusTask]: number } = {
  solve: 0.25,
  grade: 0.2,
  comment: 0.2,
  judge: 0.35,
};

/** The default weights with the judge's share set to `judgeShare` and the tutoring tasks scaled to fill the rest. */
export function taskWeightsWithJudgeShare(judgeShare: number): { [T in CorpusTask]: number } {
  const tutoring = 1 - defaultTaskWeights.judge;
  const scale = (1 - judgeShare) / tutoring;
  return {
    solve: defaultTaskWeights.solve * scale,
    grade: defaultTaskWeights.grade * scale,
    comment: defaultTaskWeights.comment * scale,
    judge: judgeShare,
  };
}

export interface GenerateExampleOptions {
  split: CorpusSplit;
  /** Fixes the task; otherwise drawn by `taskWeights`. */
  task?: CorpusTask;
  taskWeights?: Partial<{ [T in CorpusTask]: number }>;
  /** Share of tutoring examples whose user message carries a style hint (default 0.5). */
  hintProbability?: number;
  /** Share of examples that start with a system message (default 0.25). */
  systemProbability?: number;
  /** Share of judge examples on broken replies, training split only (default 0; judge-task.ts). */
  brokenReplyShare?: number;
  /**
   * Share of tutoring examples asked inside an agent-shaped prompt (agent-prompts.ts; default 0).
   * At 0 no random draw is made, so the corpora of earlier recipes stay exactly as they were.
   */
  agentPromptShare?: number;
}

export const tutorSystemPrompts: readonly string[] = [
  'You are a helpful math tutor.',
  'You help students and teachers with arithmetic homework.',
  'You are an assistant for school math.',
];

/** Share of hinted tutoring examples whose hint has the canonical wording the built-in judge writes. */
const canonicalHintShare = 0.4;

function drawHintedValues(random: SeededRandom): Partial<StyleChoice> {
  const count = random.weighted([[1, 0.5], [2, 0.35], [3, 0.15]] as const);
  const hinted: Record<string, string> = {};
  for (const dimension of random.shuffle(styleDimensions).slice(0, count)) {
    hinted[dimension] = random.pick(styleValues[dimension] as readonly string[]);
  }
  return hinted as Partial<StyleChoice>;
}

function generateStyleExample(random: SeededRandom, task: UserTask, options: GenerateExampleOptions): StyleExample {
  const tutor = buildTutorTask(task, random, options.split);
  const withHint = random.chance(options.hintProbability ?? 0.5);
  const hinted = withHint ? drawHintedValues(random) : {};
  // The judge's hints are canonical, so the policy sees that wording often enough to follow it best.
  const hint = withHint ? (random.chance(canonicalHintShare) ? canonicalStyleHint(hinted) : styleHintText(hinted, random)) : null;
  const style = drawStyle(random, hinted);
  const agentShare = options.agentPromptShare ?? 0;
  let prompt: ChatMessage[];
  if (agentShare > 0 && random.chance(agentShare)) {
    // The hint goes with the question, wherever the agent's shape puts it.
    const question = hint === null ? tutor.userMessage : (appendHint([{ role: 'user', content: tutor.userMessage }], hint)[0] as ChatMessage).content;
    prompt = agentShapedPrompt(random, question);
  } else {
    const base: ChatMessage[] = [];
    if (random.chance(options.systemProbability ?? 0.25)) {
      base.push({ role: 'system', content: random.pick(tutorSystemPrompts) });
    }
    base.push({ role: 'user', content: tutor.userMessage });
    prompt = hint === null ? base : appendHint(base, hint);
  }
  return {
    task,
    split: options.split,
    messages: [...prompt, { role: 'assistant', content: writeReply(tutor.content, style, random) }],
    style,
    hinted,
    hint,
    userMessage: tutor.userMessage,
    answer: tutor.problem.answer,
  };
}

export function generateExample(random: SeededRandom, options: GenerateExampleOptions): CorpusExample {
  const weights = { ...defaultTaskWeights, ...options.taskWeights };
  const task =
    options.task ??
    random.weighted<CorpusTask>([
      ['solve', weights.solve],
      ['grade', weights.grade],
      ['comment', weights.comment],
      ['judge', weights.judge],
    ]);
  if (task === 'judge') {
    return generateJudgeExample(random, {
      split: options.split,
      ...(options.systemProbability === undefined ? {} : { systemProbability: options.systemProbability }),
      ...(options.brokenReplyShare === undefined ? {} : { brokenReplyShare: options.brokenReplyShare }),
    });
  }
  return generateStyleExample(random, task, options);
}

export interface GenerateCorpusOptions extends Omit<GenerateExampleOptions, 'split'> {
  seed: number | string;
  count: number;
  split: CorpusSplit;
  /** Index of the first example (to generate a corpus in parts). */
  offset?: number;
}

export function generateCorpus(options: GenerateCorpusOptions): CorpusExample[] {
  const { seed, count, offset = 0, ...exampleOptions } = options;
  return Array.from({ length: count }, (_, index) =>
    generateExample(createSeededRandom(deriveSeed(seed, 'corpus', options.split, offset + index)), exampleOptions),
  );
}

/**
 * First messages for a simulated user's sessions: held-out problems (never in training), without
 * hints. The same (task, seed) always gives the same list, and a longer list extends a shorter one.
 */
export function firstMessages(options: { task: UserTask; seed: number | string; count: number }): string[] {
  return Array.from({ length: options.count }, (_, index) => {
    const random = createSeededRandom(deriveSeed(options.seed, 'first-message', options.task, index));
    return buildTutorTask(options.task, random, 'heldout').userMessage;
  });
}
