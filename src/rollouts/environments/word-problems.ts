/**
 * Short arithmetic word problems with their worked solution and typical student mistakes.
 *
 * Held-out split: train and held-out problems use disjoint name lists (every question names its
 * person), so no held-out prompt (evaluation probes, simulated users' first messages) ever occurs
 * in training; templates, items and number ranges are shared so held-out prompts stay in
 * distribution.
 */
import type { SeededRandom } from '../../core/seeded-random.js';

export type CorpusSplit = 'train' | 'heldout';

/** Wraps a key value in bold when the reply's formatting is bold, identity otherwise. */
export type Mark = (text: string) => string;
/** A sentence whose key values can be marked. */
export type MarkedSentence = (mark: Mark) => string;

export const trainNames: readonly string[] = [
  'Mia', 'Liam', 'Emma', 'Noah', 'Olivia', 'Lucas', 'Ava', 'Ethan', 'Sophia', 'Mason',
  'Isla', 'Leo', 'Chloe', 'Omar', 'Grace', 'Ravi', 'Hannah', 'Felix', 'Zoe', 'Daniel',
  'Aisha', 'Jonas', 'Lily', 'Mateo', 'Nora', 'Samuel', 'Ella', 'Kenji', 'Ruby', 'Hugo',
  'Maya', 'Oscar', 'Freya', 'Tariq', 'Layla', 'Arthur', 'Eva', 'Diego', 'Alice', 'Ben',
];

export const heldoutNames: readonly string[] = [
  'Priya', 'Tomas', 'Ingrid', 'Kwame', 'Beatrice', 'Yusuf', 'Clara', 'Matteo', 'Sienna', 'Viktor',
  'Amara', 'Finn', 'Lucia', 'Desmond', 'Harriet', 'Malik', 'Rosa', 'Elias', 'Naomi', 'Gustav',
];

export function namesOf(split: CorpusSplit): readonly string[] {
  return split === 'train' ? trainNames : heldoutNames;
}

export const items: readonly string[] = [
  'apples', 'pencils', 'marbles', 'stickers', 'cookies', 'books', 'cards', 'shells',
  'balloons', 'crayons', 'oranges', 'stamps', 'buttons', 'candles', 'erasers', 'cupcakes',
];

/** A wrong solution a student might hand in. */
export interface Mistake {
  kind: 'slip' | 'operation';
  /** The student's working, e.g. `12 - 5 = 7`. */
  work: string;
  value: number;
  /** For operation mistakes: what the student did ("subtracted") and what was needed ("addition"). */
  usedVerb: string | null;
  needed: string | null;
}

export interface WordProblem {
  templateId: string;
  question: string;
  answer: number;
  name: string;
  item: string;
  /** The correct working on one line, e.g. `12 + 5 = 17` or `12 + 5 = 17, 17 - 3 = 14`. */
  work: string;
  /** The last calculation without its result, e.g. `12 + 5`. */
  lastExpression: string;
  /** The solution steps, at least two. */
  steps: MarkedSentence[];
  /** What the question asks. */
  goal: string;
  /** Why the operation fits. */
  method: string;
  /** A check of the result. */
  check: string;
  /** The answer stated in a sentence; each contains the number. */
  answerSentences: string[];
  mistakes: Mistake[];
}

interface ProblemSetting {
  name: string;
  other: string;
  item: string;
}

interface ProblemTemplate {
  id: string;
  build(random: SeededRandom, setting: ProblemSetting): WordProblem;
}

function slip(random: SeededRandom, prefix: string, lastExpression: string, answer: number): Mistake {
  const candidates = [-2, -1, 1, 2, 10, -10].map((delta) => answer + delta).filter((value) => value > 0);
  const value = random.pick(candidates);
  return { kind: 'slip', work: `${prefix}${lastExpression} = ${value}`, value, usedVerb: null, needed: null };
}

function operation(expression: string, value: number, usedVerb: string, needed: string): Mistake {
  return { kind: 'operation', work: `${expression} = ${value}`, value, usedVerb, needed };
}

const templates: readonly ProblemTemplate[] = [
  {
    id: 'gain',
    build(random, { name, item }) {
      const a = random.integer(3, 60);
      const b = random.integer(2, 40);
      const x = a + b;
      const question = random.pick([
        `${name} has ${a} ${item}. ${name} gets ${b} more. How many ${item} does ${name} have now?`,
        `${name} collected ${a} ${item} and then found ${b} more. How many ${item} does ${name} have in total?`,
      ]);
      return {
        templateId: 'gain', question, answer: x, name, item,
        work: `${a} + ${b} = ${x}`,
        lastExpression: `${a} + ${b}`,
        steps: [
          (m) => `${name} starts with ${m(`${a} ${item}`)} and gets ${m(String(b))} more.`,
          (m) => `Adding them gives ${a} + ${b} = ${m(String(x))}.`,
        ],
        goal: `The question asks how many ${item} ${name} has after getting more.`,
        method: 'Getting more means the amount grows, so the two numbers are added together.',
        check: `To check, ${x} - ${b} = ${a}, which is the starting amount.`,
        answerSentences: [`${name} has ${x} ${item} now.`, `So ${name} ends up with ${x} ${item}.`],
        mistakes: [
          slip(random, '', `${a} + ${b}`, x),
          ...(a > b ? [operation(`${a} - ${b}`, a - b, 'subtracted', 'addition')] : []),
        ],
      };
    },
  },
  {
    id: 'give-away',
    build(random, { name, item }) {
      const a = random.integer(10, 80);
      const b = random.integer(2, a - 3);
      const x = a - b;
      const question = random.pick([
        `${name} has ${a} ${item} and gives ${b} to a friend. How many ${item} does ${name} have left?`,
        `${name} had ${a} ${item}. ${name} used ${b} of them. How many ${item} are left?`,
      ]);
      return {
        templateId: 'give-away', question, answer: x, name, item,
        work: `${a} - ${b} = ${x}`,
        lastExpression: `${a} - ${b}`,
        steps: [
          (m) => `${name} starts with ${m(`${a} ${item}`)} and ${m(String(b))} of them are gone.`,
          (m) => `Subtracting gives ${a} - ${b} = ${m(String(x))}.`,
        ],
        goal: `The question asks how many ${item} ${name} still has at the end.`,
        method: 'Giving some away makes the amount smaller, so the second number is subtracted.',
        check: `To check, ${x} + ${b} = ${a}, which is the starting amount.`,
        answerSentences: [`${name} has ${x} ${item} left.`, `So ${x} ${item} are left.`],
        mistakes: [slip(random, '', `${a} - ${b}`, x), operation(`${a} + ${b}`, a + b, 'added', 'subtraction')],
      };
    },
  },
  {
    id: 'packs',
    build(random, { name, item }) {
      const a = random.integer(2, 12);
      const b = random.integer(2, 12);
      const x = a * b;
      const question = random.pick([
        `${name} buys ${a} boxes of ${item}. Each box holds ${b} ${item}. How many ${item} does ${name} buy in total?`,
        `There are ${a} bags with ${b} ${item} in each bag. How many ${item} does ${name} get from all the bags?`,
      ]);
      return {
        templateId: 'packs', question, answer: x, name, item,
        work: `${a} x ${b} = ${x}`,
        lastExpression: `${a} x ${b}`,
        steps: [
          (m) => `There are ${m(String(a))} groups with ${m(`${b} ${item}`)} in each.`,
          (m) => `Multiplying gives ${a} x ${b} = ${m(String(x))}.`,
        ],
        goal: `The question asks for the total number of ${item} in all the groups.`,
        method: 'Equal groups are combined by multiplying the number of groups by the size of each group.',
        check: `To check, ${x} / ${a} = ${b}, which is the size of one group.`,
        answerSentences: [`${name} gets ${x} ${item} in total.`, `So there are ${x} ${item} altogether.`],
        mistakes: [slip(random, '', `${a} x ${b}`, x), operation(`${a} + ${b}`, a + b, 'added', 'multiplication')],
      };
    },
  },
  {
    id: 'share',
    build(random, { name, item }) {
      const friends = random.integer(2, 9);
      const each = random.integer(2, 12);
      const total = friends * each;
      const question = random.pick([
        `${name} shares ${total} ${item} equally among ${friends} friends. How many ${item} does each friend get?`,
        `${name} puts ${total} ${item} into ${friends} equal piles. How many ${item} are in each pile?`,
      ]);
      return {
        templateId: 'share', question, answer: each, name, item,
        work: `${total} / ${friends} = ${each}`,
        lastExpression: `${total} / ${friends}`,
        steps: [
          (m) => `${name} splits ${m(`${total} ${item}`)} into ${m(String(friends))} equal parts.`,
          (m) => `Dividing gives ${total} / ${friends} = ${m(String(each))}.`,
        ],
        goal: `The question asks how many ${item} go into each equal share.`,
        method: 'Sharing equally means dividing the total by the number of shares.',
        check: `To check, ${each} x ${friends} = ${total}, which is the total.`,
        answerSentences: [`Each share has ${each} ${item}.`, `So each friend gets ${each} ${item}.`],
        mistakes: [
          slip(random, '', `${total} / ${friends}`, each),
          operation(`${total} - ${friends}`, total - friends, 'subtracted', 'division'),
        ],
      };
    },
  },
  {
    id: 'two-step',
    build(random, { name, item }) {
      const a = random.integer(10, 50);
      const b = random.integer(2, 30);
      const sum = a + b;
      const c = random.integer(2, sum - 3);
      const x = sum - c;
      const question =
        `${name} has ${a} ${item}, buys ${b} more and then gives ${c} away. ` +
        `How many ${item} does ${name} have left?`;
      return {
        templateId: 'two-step', question, answer: x, name, item,
        work: `${a} + ${b} = ${sum}, ${sum} - ${c} = ${x}`,
        lastExpression: `${sum} - ${c}`,
        steps: [
          (m) => `After buying more, ${name} has ${a} + ${b} = ${m(String(sum))} ${item}.`,
          (m) => `After giving some away, ${sum} - ${c} = ${m(String(x))} ${item} are left.`,
        ],
        goal: `The question asks how many ${item} ${name} has after both changes.`,
        method:
          'The changes happen one after the other, so first add what was bought and then subtract what was given away.',
        check: `To check, ${x} + ${c} - ${b} = ${a}, which is the starting amount.`,
        answerSentences: [`${name} has ${x} ${item} left.`, `So ${name} ends up with ${x} ${item}.`],
        mistakes: [slip(random, `${a} + ${b} = ${sum}, `, `${sum} - ${c}`, x)],
      };
    },
  },
  {
    id: 'compare',
    build(random, { name, other, item }) {
      const b = random.integer(3, 40);
      const a = b + random.integer(2, 40);
      const x = a - b;
      const question =
        `${name} has ${a} ${item} and ${other} has ${b} ${item}. ` +
        `How many more ${item} does ${name} have than ${other}?`;
      return {
        templateId: 'compare', question, answer: x, name, item,
        work: `${a} - ${b} = ${x}`,
        lastExpression: `${a} - ${b}`,
        steps: [
          (m) => `${name} has ${m(String(a))} and ${other} has ${m(String(b))}.`,
          (m) => `The difference is ${a} - ${b} = ${m(String(x))}.`,
        ],
        goal: `The question asks for the difference between what ${name} and ${other} have.`,
        method: '"How many more" asks for a difference, so the smaller number is subtracted from the larger one.',
        check: `To check, ${b} + ${x} = ${a}, which is what ${name} has.`,
        answerSentences: [`${name} has ${x} more ${item} than ${other}.`, `So the difference is ${x} ${item}.`],
        mistakes: [slip(random, '', `${a} - ${b}`, x), operation(`${a} + ${b}`, a + b, 'added', 'subtraction')],
      };
    },
  },
  {
    id: 'together',
    build(random, { name, other, item }) {
      const a = random.integer(3, 60);
      const b = random.integer(3, 60);
      const x = a + b;
      const question = `${name} has ${a} ${item} and ${other} has ${b}. How many ${item} do they have together?`;
      return {
        templateId: 'together', question, answer: x, name, item,
        work: `${a} + ${b} = ${x}`,
        lastExpression: `${a} + ${b}`,
        steps: [
          (m) => `${name} has ${m(String(a))} and ${other} has ${m(String(b))}.`,
          (m) => `Together that is ${a} + ${b} = ${m(String(x))}.`,
        ],
        goal: `The question asks for the total that ${name} and ${other} have together.`,
        method: '"Together" asks for a total, so the two amounts are added.',
        check: `To check, ${x} - ${a} = ${b}, which is what ${other} has.`,
        answerSentences: [`Together they have ${x} ${item}.`, `So ${name} and ${other} have ${x} ${item} in total.`],
        mistakes: [
          slip(random, '', `${a} + ${b}`, x),
          ...(a > b ? [operation(`${a} - ${b}`, a - b, 'subtracted', 'addition')] : []),
        ],
      };
    },
  },
  {
    id: 'cost',
    build(random, { name, item }) {
      const a = random.integer(2, 12);
      const price = random.integer(2, 15);
      const x = a * price;
      const question = `${name} buys ${a} ${item} that cost ${price} dollars each. How many dollars does ${name} spend?`;
      return {
        templateId: 'cost', question, answer: x, name, item,
        work: `${a} x ${price} = ${x}`,
        lastExpression: `${a} x ${price}`,
        steps: [
          (m) => `${name} buys ${m(`${a} ${item}`)} at ${m(`${price} dollars`)} each.`,
          (m) => `The cost is ${a} x ${price} = ${m(String(x))} dollars.`,
        ],
        goal: `The question asks how much ${name} pays for all the ${item}.`,
        method: 'The same price is paid for every item, so the number of items is multiplied by the price.',
        check: `To check, ${x} / ${a} = ${price}, which is the price of one.`,
        answerSentences: [`${name} spends ${x} dollars.`, `So the ${item} cost ${x} dollars in total.`],
        mistakes: [
          slip(random, '', `${a} x ${price}`, x),
          operation(`${a} + ${price}`, a + price, 'added', 'multiplication'),
        ],
      };
    },
  },
];

export const templateIds: readonly string[] = templates.map((template) => template.id);

export function generateWordProblem(random: SeededRandom, split: CorpusSplit): WordProblem {
  const names = namesOf(split);
  const [name, other] = random.shuffle(names) as [string, string];
  const template = random.pick(templates);
  const problem = template.build(random, { name, other, item: random.pick(items) });
  // Small operands can make a wrong operation land on the right number (2 + 2 = 2 x 2).
  return { ...problem, mistakes: problem.mistakes.filter((mistake) => mistake.value !== problem.answer) };
}

/** A student's write-up of a (possibly wrong) solution, on one line. */
export function describeWork(random: SeededRandom, work: string, value: number): string {
  return random.pick([
    `${work}, so the answer is ${value}.`,
    `I did ${work}. The answer is ${value}.`,
    `${work}. Final result ${value}.`,
  ]);
}
