/**
 * The judge-only corpus of `builtin:tiny-judge`: exactly the prompts of `buildJudgePrompt` /
 * `buildHintPrompt` with the right answer, over every kind of next state a served turn meets.
 *
 * A share of the examples are those of the shared corpus's judge task (judge-task.ts: style
 * complaints with their hints, thanks, neutral follow-ups, broken replies), so the judge model
 * keeps writing the style hints OPD distils. The rest are next states that say how a reply went
 * without naming a style (outcome-next-states.ts) and tool results (tool-results.ts): the kinds
 * the shared model misread on the held-out set ("That is wrong." read as thanks). Their hint
 * prompts are answered `\boxed{-1}`: they ask for no style, so there is no style hint to give.
 *
 * Example `i` depends only on (seed, i) through the random it is given, like the shared corpus.
 */
import type { ChatMessage } from '../../spec/chat.js';
import type { VoteScore } from '../../core/rl/aggregate-votes.js';
import type { SeededRandom } from '../../core/seeded-random.js';
import { buildHintPrompt, buildJudgePrompt } from '../../core/judge-prompts.js';
import { builtinJudgePromptBudget } from '../../builtin/builtin-judge-options.js';
import type { CorpusSplit } from '../../rollouts/environments/word-problems.js';
import { generateJudgeExample, judgeContextSystemPrompts, type JudgeExampleInput, type JudgePromptKind, type NextStateKind } from './judge-task.js';
import {
  composeAgreement,
  composeCorrection,
  composeMovingOn,
  composeNegatedComplaint,
  composeNegatedPraise,
  composePlainComplaint,
  composeThankfulComplaint,
  type Correction,
} from './outcome-next-states.js';
import { composeToolFailure, composeToolSuccess, drawToolScenario } from './tool-results.js';

export type OutcomeKind =
  | 'correction'
  | 'plain-complaint'
  | 'thankful-complaint'
  | 'negated-praise'
  | 'negated-complaint'
  | 'moving-on'
  | 'agreement'
  | 'tool-failure'
  | 'tool-success';

export type JudgeCorpusKind = NextStateKind | OutcomeKind;

export interface JudgeCorpusExample {
  task: 'judge';
  split: CorpusSplit;
  /** The judge prompt followed by the judge's answer. */
  messages: ChatMessage[];
  input: JudgeExampleInput;
  prompt: JudgePromptKind;
  kind: JudgeCorpusKind;
  expectedScore: VoteScore;
}

/**
 * How often each kind is drawn; `style` stands for an example of the shared judge task. Two short
 * stages on tilted mixes traded mistakes (30% style and 5% agreement read thanks as a thankful
 * complaint; more thanks and moving on then read thankful complaints as thanks), so the mix is
 * balanced: about as many +1 outcomes as −1 ones, each kind near a tenth, style kept for the hints,
 * and tool failures exactly as often as successes (a run on 7% failures and 11% successes read every
 * held-out tool result as a success at its first checkpoint).
 */
export const judgeCorpusKindWeights: readonly (readonly [OutcomeKind | 'style', number])[] = [
  ['style', 0.18],
  ['correction', 0.09],
  ['plain-complaint', 0.09],
  ['thankful-complaint', 0.09],
  ['negated-praise', 0.07],
  ['tool-failure', 0.09],
  ['negated-complaint', 0.09],
  ['moving-on', 0.12],
  ['agreement', 0.09],
  ['tool-success', 0.09],
];

export const outcomeScores: { readonly [K in OutcomeKind]: -1 | 1 } = {
  correction: -1,
  'plain-complaint': -1,
  'thankful-complaint': -1,
  'negated-praise': -1,
  'negated-complaint': 1,
  'moving-on': 1,
  agreement: 1,
  'tool-failure': -1,
  'tool-success': 1,
};

/** The judge's reading before its box, per kind. */
const readings: { readonly [K in OutcomeKind]: readonly string[] } = {
  correction: ['The user says the answer is wrong and corrects it.', 'The user corrects the result, so the reply was wrong.', 'The user points out a mistake in the reply.'],
  'plain-complaint': ['The user says the reply did not help.', 'The user complains that the reply missed the request.', 'The reply failed what the user asked.'],
  'thankful-complaint': ['The user thanks politely but says the reply is wrong.', 'Despite the thanks, the user rejects the reply.', 'The thanks is politeness; the complaint decides.'],
  'negated-praise': ['The user says the reply is not right.', 'The user denies that the reply was good.', 'The praise is negated, so the user is unhappy.'],
  'negated-complaint': ['The user finds nothing wrong with the reply.', 'The user has no complaint, so the reply worked.', 'The complaint is negated, so the reply was fine.'],
  'moving-on': ['The user moves on to a new question, so the reply worked.', 'The user accepts the reply and asks the next thing.', 'The user goes on to another task.'],
  agreement: ['The user is satisfied and moves on.', 'The user thanks the assistant, so the reply worked.', 'The user agrees with the reply.'],
  'tool-failure': ['The tool failed, so the call did not work.', 'The tool returned an error.', 'The call ended in an error.'],
  'tool-success': ['The tool succeeded and returned the result.', 'The call worked and returned output.', 'The tool returned what was asked.'],
};

const noHintReadings: readonly string[] = ['The next state asks for no style change.', 'There is no style to correct in the next state.', 'The next state names no style.'];

type Operator = Correction['operator'];
const questionTemplates: readonly string[] = [
  'What do you get for {a} {op} {b}?', 'Please work out {a} {op} {b}.', 'Calculate {a} {op} {b}.', 'Can you solve {a} {op} {b} for me?',
  '{a} {op} {b} = ?', 'I need {a} {op} {b}, quickly.', 'Help me with {a} {op} {b}.', 'My homework asks for {a} {op} {b}.',
  'Find the value of {a} {op} {b}.', 'Compute {a} {op} {b}, please.', 'Tell me {a} {op} {b}.', 'Solve: {a} {op} {b}',
];
const answerTemplates: readonly string[] = [
  '{a} {op} {b} = {result}.', 'The answer is {result}.', '{result}', 'You get {result}.', 'It works out to {result}.',
  'That is {result}.', '{a} {op} {b} gives {result}.', 'Result: {result}', 'Let me compute: {a} {op} {b} = {result}.', 'It equals {result}.',
];

interface ArithmeticTurn {
  question: string;
  reply: string;
  correction: Correction;
}

function arithmeticTurn(random: SeededRandom, wrongReply: boolean): ArithmeticTurn {
  const operator = random.pick<Operator>(['+', '+', '-', '×']);
  const a = random.integer(2, operator === '×' ? 20 : 99);
  const b = random.integer(2, operator === '×' ? 12 : a);
  const right = operator === '+' ? a + b : operator === '-' ? a - b : a * b;
  let wrong = right + random.pick([-10, -2, -1, 1, 2, 10, 3, -3]);
  if (wrong < 0) wrong = right + 1;
  const fill = (template: string, result: number) =>
    template.replaceAll('{a}', String(a)).replaceAll('{b}', String(b)).replaceAll('{op}', operator === '×' ? random.pick(['×', '*', 'times']) : operator).replaceAll('{result}', String(result));
  return {
    question: fill(random.pick(questionTemplates), right),
    reply: fill(random.pick(answerTemplates), wrongReply ? wrong : right),
    correction: { operands: [a, b], operator, right, wrong },
  };
}

/** General requests, each with a good reply; bad replies are another request's reply or an off-topic one. */
const generalTurns: readonly (readonly [string, string])[] = [
  ['What is the capital of Australia?', 'The capital of Australia is Canberra.'],
  ['Give me an antonym of "cold".', 'Hot.'],
  ['How do I print a line in JavaScript?', 'Use console.log("text");'],
  ['Write one sentence about autumn.', 'Autumn paints the trees in red and gold before the first frost.'],
  ['What does HTML stand for?', 'HyperText Markup Language.'],
  ['Suggest a name for a pet turtle.', 'How about Shelby?'],
  ['Translate "thank you" into German.', 'Danke.'],
  ['How many continents are there?', 'There are seven continents.'],
  ['Explain what a noun is in one line.', 'A noun names a person, place, thing or idea.'],
  ['Sort 9, 2, 7 from small to large.', '2, 7, 9.'],
  ['Which planet is closest to the sun?', 'Mercury.'],
  ['How do I undo my last git commit but keep the changes?', 'Run git reset --soft HEAD~1.'],
  ['Give me a rhyme for "cat".', 'Hat.'],
  ['What is the boiling point of water at sea level?', '100 degrees Celsius.'],
  ['Name a mammal that can fly.', 'The bat.'],
  ['Write a SQL query that counts the rows of a table named orders.', 'SELECT COUNT(*) FROM orders;'],
];
const offTopicReplies: readonly string[] = [
  'Bananas are berries, botanically speaking.', 'I like trains.', 'Here is a recipe for pancakes: flour, eggs, milk.',
  'The weather is nice today.', 'Let me tell you about the history of the bicycle.', 'Error 42.', 'As an assistant, I enjoy chess.',
  'Sure! Sure! Sure! Sure!', 'The answer depends on many things.', 'I cannot help with that.',
];

interface JudgedTurn {
  context: ChatMessage[];
  response: ChatMessage;
  correction: Correction | null;
}

/** A turn whose reply is good or bad as the kind needs (the next state decides the verdict either way). */
function plainTurn(random: SeededRandom, goodReply: boolean): JudgedTurn {
  if (random.chance(0.5)) {
    const turn = arithmeticTurn(random, !goodReply);
    return { context: [{ role: 'user', content: turn.question }], response: { role: 'assistant', content: turn.reply }, correction: goodReply ? null : turn.correction };
  }
  const [request, good] = random.pick(generalTurns);
  const reply = goodReply ? good : random.chance(0.5) ? random.pick(offTopicReplies) : random.pick(generalTurns)[1];
  return { context: [{ role: 'user', content: request }], response: { role: 'assistant', content: reply }, correction: null };
}

function outcomeNextState(random: SeededRandom, kind: OutcomeKind): { turn: JudgedTurn; next: ChatMessage } {
  if (kind === 'tool-failure' || kind === 'tool-success') {
    const scenario = drawToolScenario(random);
    const callId = `call_${random.integer(0, 999)}`;
    return {
      turn: {
        context: [{ role: 'user', content: scenario.request }],
        response: { role: 'assistant', content: '', toolCalls: [{ id: callId, name: scenario.tool, arguments: scenario.arguments }] },
        correction: null,
      },
      next: { role: 'tool', content: kind === 'tool-failure' ? composeToolFailure(random, scenario) : composeToolSuccess(random, scenario), toolCallId: callId, name: scenario.tool },
    };
  }
  if (kind === 'correction') {
    const turn = arithmeticTurn(random, true);
    return {
      turn: { context: [{ role: 'user', content: turn.question }], response: { role: 'assistant', content: turn.reply }, correction: turn.correction },
      next: { role: 'user', content: composeCorrection(random, turn.correction) },
    };
  }
  const negative = outcomeScores[kind] < 0;
  // Now and then the words disagree with the reply's quality, so the judge reads the message, not the reply.
  const turn = plainTurn(random, negative ? random.chance(0.2) : random.chance(0.85));
  const text: { readonly [K in Exclude<OutcomeKind, 'correction' | 'tool-failure' | 'tool-success'>]: () => string } = {
    'plain-complaint': () => composePlainComplaint(random),
    'thankful-complaint': () => composeThankfulComplaint(random, turn.correction),
    'negated-praise': () => composeNegatedPraise(random),
    'negated-complaint': () => composeNegatedComplaint(random),
    'moving-on': () => composeMovingOn(random),
    agreement: () => composeAgreement(random),
  };
  return { turn, next: { role: 'user', content: text[kind]() } };
}

export interface JudgeCorpusOptions {
  split: CorpusSplit;
  /** Fixes the kind; otherwise drawn by `judgeCorpusKindWeights`. */
  kind?: OutcomeKind | 'style';
  prompt?: JudgePromptKind;
  /** Share of the shared-task examples on broken replies (default 0.25). */
  brokenReplyShare?: number;
}

export function generateJudgeCorpusExample(random: SeededRandom, options: JudgeCorpusOptions): JudgeCorpusExample {
  const kind = options.kind ?? random.weighted(judgeCorpusKindWeights);
  if (kind === 'style') {
    const example = generateJudgeExample(random, { split: options.split, brokenReplyShare: options.brokenReplyShare ?? 0.25, ...(options.prompt === undefined ? {} : { prompt: options.prompt }) });
    return { task: 'judge', split: options.split, messages: example.messages, input: example.input, prompt: example.prompt, kind: example.nextKind, expectedScore: example.expectedScore };
  }
  // The server judges turns with verdict prompts; hint prompts on these kinds only teach "no hint".
  const prompt = options.prompt ?? (random.chance(0.8) ? 'verdict' : 'hint');
  const { turn, next } = outcomeNextState(random, kind);
  const context: ChatMessage[] = random.chance(0.2) ? [{ role: 'system', content: random.pick(judgeContextSystemPrompts) }, ...turn.context] : turn.context;
  const input: JudgeExampleInput = { context, response: turn.response, nextState: [next] };
  const expectedScore: VoteScore = prompt === 'verdict' ? outcomeScores[kind] : -1;
  const answer = prompt === 'verdict' ? `${random.pick(readings[kind])} \\boxed{${expectedScore}}` : `${random.pick(noHintReadings)} \\boxed{-1}`;
  const promptMessages = prompt === 'verdict' ? buildJudgePrompt(input, builtinJudgePromptBudget) : buildHintPrompt(input, builtinJudgePromptBudget);
  return { task: 'judge', split: options.split, messages: [...promptMessages, { role: 'assistant', content: answer }], input, prompt, kind, expectedScore };
}
