/**
 * Training-split next states built from parts: an opener, what is wrong with the reply and what
 * the user wants instead for complaints; thanks words, praise and a move-on for thanks; fillers
 * and off-topic remarks for neutral messages. Thousands of combinations over a wide vocabulary
 * teach a small judge what the words mean instead of which whole sentences to recognise (with a
 * few whole sentences per value it learned the strings and called nearly every unseen message a
 * complaint). The held-out split keeps its whole sentences (next-state-phrases.ts), so the
 * judge's held-out accuracy still measures wording it has never seen; a test checks that no
 * composition reproduces one of them.
 */
import type { SeededRandom } from '../../core/seeded-random.js';
import type { StyleChoice, StyleDimension } from '../../builtin/style.js';

type PartsByValue = { readonly [D in StyleDimension]: { readonly [V in StyleChoice[D]]: readonly string[] } };

const complaintOpeners: readonly string[] = [
  '', '', '', 'Hmm.', 'No.', 'Not quite.', 'Nope.', 'Ugh.', 'Sorry, but', 'Hm, not like this.', "That's not what I wanted.",
  'Not like this.', 'Almost, but', 'Actually,', "I don't like this.", "This won't work for me.", 'Meh.', 'Wait,',
  'Please redo it.', 'Try again.', 'Hmm, no.', 'Honestly,', 'One problem:', 'Can you fix this?', 'Not great.',
];

/**
 * Why the reply matters to the user, naming no style ("I have to hand this in."). Users often say
 * it before the complaint, and a judge that read such a sentence as an unrelated remark gave no
 * hint for the correction after it.
 */
const stakes: readonly string[] = [
  'I have to hand this in tomorrow.', 'My teacher checks these carefully.', 'This goes to my boss.', 'I need this for class.',
  'My students will read this.', 'This is for my report.', 'The parents will see this.', 'I am sending this to my tutor.',
  'My teacher will notice.', 'This is going on the class website.', 'I have to copy this into my notebook.', 'My mum will check it.',
];

/** What is wrong with the reply, by the value the user wants instead. */
const problems: PartsByValue = {
  formatting: {
    plain: [
      'it looks like a robot wrote it', 'there is way too much formatting', 'the bold and the lists look fake',
      'it looks AI-generated', 'the stars and numbered points are distracting', 'it looks machine-made',
      'the markdown is over the top', 'nobody writes like that with bold and numbering', 'it is cluttered with formatting',
      'all the bold text and numbering look artificial', 'it looks like a chatbot answer', 'it does not look hand-written',
      'there is bold everywhere and every step is numbered', 'the bold words and the numbered steps give it away',
      'it is full of bold and numbered lines', 'the stars and the numbering look fake', 'nobody numbers every step like that',
      'my teacher will see a computer wrote it', 'it is obviously not my own writing',
      // Negations name the unwanted thing ("nobody uses bold"): a small judge that keys on the
      // noun reads them as asking for it, so they need many spellings.
      'nobody uses bold like that', 'real people do not number their sentences', 'the layout is far too fancy',
      'no one writes homework with stars and lists', 'nobody would put bold words in homework', 'people do not write numbered steps',
      'it is over-formatted', 'it is heavily formatted', 'there is far too much markup', 'it needs to look hand-written',
      'it has to look natural', 'it does not look like something I wrote', 'it has to pass as normal writing',
    ],
    bold: [
      'nothing stands out', "I can't find the key numbers", 'it is hard to skim', 'the important numbers get lost',
      'the main results are buried in the text', 'my eyes skip over the key values', 'the key figures do not stand out',
    ],
    numbered: [
      'it is a wall of text', "I can't follow the steps", "it's one big blob", 'the steps run together',
      'I lose track of the working', 'everything is in one paragraph', 'the working is hard to follow',
    ],
  },
  length: {
    short: [
      'it is way too long', "that's far too much text", 'it is too wordy', 'it rambles', "I don't have time to read all that",
      'this is an essay', 'it goes on and on', 'there is too much padding', 'it is longer than it needs to be',
      'I only asked a small question',
    ],
    long: [
      "it's too short", 'it is too thin', 'it barely says anything', 'it is far too brief', "there's no detail",
      "it's skimpy", "that's too terse", "it's just a couple of lines", 'it skips everything', 'it is not nearly enough',
      'it does not explain anything', 'that is not enough feedback',
    ],
  },
  tone: {
    warm: [
      'it sounds cold', "it's too dry", 'it feels harsh', 'it reads like a rejection letter', 'it is so flat',
      'the student will feel discouraged', 'it sounds like a robot scolding', 'there is no encouragement at all',
      'it sounds unfriendly', 'it is a bit grumpy', 'kids need to feel good about trying', 'it is very stern',
    ],
    neutral: [
      "it's too gushy", 'the praise is over the top', 'there is too much cheerleading', 'all the exclamation marks are annoying',
      'the flattery is too much', 'it sounds fake with all the compliments', 'it is too bubbly', 'the enthusiasm is distracting',
    ],
  },
  answerFormat: {
    line: [
      "I can't find the final answer", 'the result is buried', "the answer isn't labelled", 'I have to hunt for the result',
      'the final number is hidden in the text',
    ],
    boxed: [
      "the answer isn't boxed", 'my class always boxes the answer', 'the final number is not marked',
      'the result has no box around it', 'our worksheets need boxed answers',
    ],
    sentence: [
      'the Answer: label looks odd', "I don't like the box around the answer", 'the tag on the answer looks weird',
      'the answer label feels robotic', 'nobody boxes or labels answers like that',
      'nobody puts a box around an answer', 'people do not label their answers like that', 'boxing the answer looks artificial',
      'no one draws boxes around answers', 'the boxed answer gives it away',
    ],
  },
};

/** What the user asks for instead. `{answer}` stands for the problem's answer. */
const requests: PartsByValue = {
  formatting: {
    plain: [
      'write it in plain prose', 'no bold and no lists please', 'just use normal paragraphs', 'drop the formatting',
      'make it look hand-written', 'lose the stars and the numbering', 'write it like a normal person would',
      'no bold text, no numbered steps', 'keep it plain, without any markdown', 'remove the bold and the list',
      'no stars and no numbers in front of the lines', 'do not bold anything or number anything', 'stop using bold and lists',
      'get rid of the bold and the numbering', 'strip out the markdown', 'take out all the formatting', 'ditch the bold and the list',
      'write it as ordinary sentences', 'turn it into plain paragraphs', 'no asterisks and no list', 'make it look like a person typed it',
    ],
    bold: [
      'put the key numbers in bold', 'bold the important values', 'make the main results stand out in bold',
      'highlight the key figures in bold', 'use bold for the important numbers', 'mark the key values with bold',
      'make the key numbers bold', 'emphasise the results with bold', 'set the main numbers in bold', 'bold whatever matters most',
    ],
    numbered: [
      'number the steps', 'use a numbered list', 'give me steps 1, 2, 3', 'put each step on its own numbered line',
      'split the working into numbered steps', 'lay the steps out as a numbered list', 'make it an enumerated list',
      'list the steps with numbers', 'turn it into a numbered list', 'number each line of the working', 'break it up into step 1, step 2 and so on',
    ],
  },
  length: {
    short: [
      'keep it short', 'just a few sentences', 'cut it down', 'shorter please', 'give me the short version', 'be brief',
      'trim it', 'one or two lines is enough', 'make it quick', 'keep it under 40 words',
      'shorten it', 'cut it way down', 'condense it', 'make it shorter', 'boil it down', 'less text please', 'sum it up in a line or two',
    ],
    long: [
      'explain it in much more detail', 'write a lot more', 'go through it step by step, thoroughly',
      'I need at least a full paragraph', 'expand on it', 'give me a detailed explanation', 'say much more about it',
      'write at least 100 words', 'elaborate on every step', 'go into depth',
      'make it longer', 'flesh it out', 'add a lot more explanation', 'spell out every step', 'give me the full explanation', 'add more detail',
    ],
  },
  tone: {
    warm: [
      'be more encouraging', 'add some warmth', 'say something kind, like well done', 'cheer the student on',
      'be friendlier', 'sound kind and supportive', 'add a bit of praise', 'make it upbeat and friendly', 'be gentle and warm',
      'sound warmer', 'add some encouragement', 'praise the student a little', 'make it kinder', 'soften the tone', 'say something nice',
    ],
    neutral: [
      'just the facts', 'keep it neutral', 'skip the praise', 'be matter-of-fact', 'tone it down', 'no compliments please',
      'stay factual', 'keep it sober and plain in tone', 'leave out the cheering',
      'drop the cheerleading', 'calm it down', 'less enthusiasm please', 'cut the praise', 'make it sound professional', 'lose the exclamation marks',
    ],
  },
  answerFormat: {
    line: [
      'put the answer on its own line as Answer: {answer}', 'end with an Answer: line', "finish with 'Answer:' and the number",
      'add a last line that says Answer: {answer}', 'label the result on a separate Answer: line',
      'write Answer: and the number at the end', 'put Answer: {answer} on the last line', 'add an Answer: line at the bottom', 'close with a line saying Answer:',
    ],
    boxed: [
      'box the final answer', 'put the answer in \\boxed{}', 'wrap the result in a box', 'use a LaTeX box for the answer',
      'write it as \\boxed{{answer}}', 'put a box around the final number',
      'put the result in a box', 'draw a box around the answer', 'box the result', 'put the final answer inside \\boxed{}', 'the answer goes in a box',
    ],
    sentence: [
      'just say the answer in a sentence', 'no box and no Answer: line, put it in the text', 'work the answer into a normal sentence',
      'state the result in words, without a label', 'mention the answer naturally in a sentence',
      'no box around the answer', 'skip the box and the label', 'do not box the answer, just say it',
      'drop the Answer: label', 'lose the box', 'get rid of the box and the label', 'just mention the number in the text', 'write the answer into the sentence',
    ],
  },
};

const thanksWords: readonly string[] = [
  'Thanks', 'Thank you', 'Thanks a lot', 'Many thanks', 'Cheers', 'Much appreciated', 'I appreciate it', 'Thank you so much',
  'Thanks a bunch', 'Thx', 'Great, thanks', 'Ok, thanks', 'Thanks again', 'Big thanks',
];

const praises: readonly string[] = [
  "that's perfect", 'exactly what I needed', 'great', 'this is just right', 'spot on', 'lovely', 'brilliant', 'nice work',
  'that works', 'this is clear', 'that looks right', 'good job', 'excellent', "that's much better", 'now it is right',
  'I like it', "that's helpful", 'super', 'wonderful', 'fantastic', 'awesome', 'sorted', 'that is the style I wanted',
  'that is the right length', 'the tone is right', 'that is what I was after', 'all good',
  'very helpful', 'that is ready to hand in', 'the students will like this', 'I can use this', 'clear and helpful',
];

/**
 * Thanks that name the style the reply has ("this is thorough enough"). Without them the judge
 * learned style words as complaint words: a thanks for a thorough grading read as "wants a shorter
 * reply", and training on that judgement taught the policy the opposite of the user's taste.
 */
const stylePraises: PartsByValue = {
  formatting: {
    plain: [
      'it reads naturally', 'it looks hand-written, good', 'no clutter, nice', 'clean plain text, good',
      'it looks like a person wrote it', 'no bold and no lists, perfect', 'nobody will guess a computer wrote it',
      'it looks like my own writing', 'no fancy formatting, good', 'plain and simple, like I wanted',
      'it passes as hand-written', 'no one will be able to tell', 'it looks natural without the markdown',
      'no stars or numbered steps this time, good', 'it could be my own work', 'it will pass as my own homework',
      'my teacher will think I wrote it',
    ],
    bold: ['the bold numbers help', 'the key figures in bold are easy to spot', 'I like the bold highlights', 'the bold makes it easy to skim'],
    numbered: ['the numbered steps are easy to follow', 'the numbered list is clear', 'step by step, nice', 'the steps are easy to follow now'],
  },
  length: {
    short: ['nice and short', 'short and sweet', 'brief, just how I like it', 'quick to read, good', 'brief enough for me', 'quick and to the point'],
    long: [
      'this is detailed enough', 'the detail is just right', 'nice and detailed', 'a thorough explanation, great', 'plenty of feedback',
      'the amount of detail is right', 'this covers everything I wanted', 'enough detail for my students', 'the depth is what I was after',
      'it explains every step properly', 'a full explanation, just as I wanted', 'this is the detail I was missing',
      'thorough and complete', 'now there is real feedback in it', 'long enough to be useful', 'that is enough detail now',
    ],
  },
  tone: {
    warm: [
      'the kind words are lovely', 'the encouragement is great', 'such a friendly tone', 'the student will feel good',
      'the student will love the praise', 'warm and kind, great', 'that encouragement is just right', 'the kids will feel proud',
    ],
    neutral: ['straight to the point, good', 'factual and calm, good', 'no fluff, nice', 'no gushing, good', 'plain facts, that is fine'],
  },
  answerFormat: {
    line: ['the Answer: line is handy', 'easy to find the answer line', 'the answer line at the end is handy'],
    boxed: ['the boxed answer is perfect', 'the box makes the answer clear', 'the box makes the answer easy to find'],
    sentence: ['the answer reads naturally in the sentence', 'the answer in plain words is fine', 'no box, no label, good'],
  },
};

/**
 * What a style is called in "that's the {noun} I {wanted}": the frame complaints use too ("I need
 * more detail"), so the judge has to read the approval around it, not the noun.
 */
const styleNouns: PartsByValue = {
  formatting: {
    plain: ['plain look', 'simple layout', 'natural style', 'hand-written look'],
    bold: ['bold highlighting', 'emphasis on the numbers'],
    numbered: ['step-by-step layout', 'numbered layout'],
  },
  length: {
    short: ['length', 'short version', 'brevity'],
    long: ['depth', 'amount of explanation', 'thoroughness', 'amount of feedback', 'kind of detail', 'length'],
  },
  tone: {
    warm: ['tone', 'warmth', 'kindness', 'encouraging tone'],
    neutral: ['tone', 'matter-of-fact tone', 'plain tone'],
  },
  answerFormat: {
    line: ['answer line', 'layout of the answer'],
    boxed: ['boxed answer', 'answer format'],
    sentence: ['answer format', 'way the answer is written'],
  },
};

const wantedVerbs: readonly string[] = ['wanted', 'was after', 'was hoping for', 'need', 'like', 'was looking for', 'asked for'];

/** A short thanks that may close a style praise. */
const closingThanks: readonly string[] = ['Thanks!', 'Thank you.', 'Cheers.'];

function withClosingThanks(random: SeededRandom, text: string): string {
  return random.chance(0.3) ? `${text} ${random.pick(closingThanks)}` : text;
}

/** Short words of approval that open a thanks naming a style ("Great, this is detailed enough."). */
const approvals: readonly string[] = ['Great', 'Perfect', 'Nice', 'Lovely', 'Good', 'Excellent', 'Yes', 'Brilliant', 'Wonderful', 'Oh nice'];

const moveOns: readonly string[] = [
  'On to the next one.', 'Moving on.', "I'll use this.", 'Next question coming.', 'That helps a lot.', 'All clear now.',
  'That saves me time.', "I'll send it.", 'Now I get it.', 'See you tomorrow.', "Let's do another.",
];

const neutralOpeners: readonly string[] = ['', '', 'Hmm.', 'Ok.', 'Wait.', 'Hold on.', 'By the way,', 'Random question:', 'Oh,', 'Right.'];

const neutralRemarks: readonly string[] = [
  'what time is it?', 'did you watch the football on Saturday?', 'will it be sunny tomorrow?', 'someone is at the door.',
  "I'll look at this later.", 'do you know any good books?', 'my cat wants food.', 'let me ask my friend first.',
  'I need a coffee.', 'how do I reset my password?', 'what is the capital of France?', 'the bus is late again.',
  'let me read it first.', 'can you remind me about the meeting?', 'my laptop battery is low.', 'I have to pick up my kid.',
  'what should I cook tonight?', 'give me a minute.', 'let me think about it.', 'is the library open on Sunday?',
  'I will be back in ten minutes.', 'who won the match?', 'my internet keeps dropping.', 'how long is the holiday?',
];

/** The text as a sentence: capitalized, ending in a full stop unless it ends in one already. */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  const capitalized = trimmed[0]!.toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capitalized) ? capitalized : `${capitalized}.`;
}

function partsOf(table: PartsByValue, dimension: StyleDimension, value: string): readonly string[] {
  return (table[dimension] as Record<string, readonly string[]>)[value] ?? [];
}

/**
 * A complaint that only says what to do. The judge read bare imperatives ("Break the working into
 * numbered points.") and wishes ("My teacher wants ...") as asking for no change when its data had
 * only "please ..." and the bare request, so requests come in the frames users wrap them in.
 */
const requestFrames: readonly (readonly [string, number])[] = [
  ['{r}.', 0.35], ['please {r}.', 0.2], ['can you {r}?', 0.1], ['could you {r}?', 0.07], ['I would like you to {r}.', 0.07],
  ['I want you to {r}.', 0.07], ['next time, {r}.', 0.07], ['you need to {r}.', 0.07],
];

/** Requests that are not a verb phrase ("no bold and no lists please", "shorter please") stand alone. */
const verblessRequest = /^(no |do not |just a |just the |shorter|less |one or two|I |the )/;

function requestOnly(random: SeededRandom, request: string): string {
  if (verblessRequest.test(request)) return sentence(request);
  return sentence(random.weighted(requestFrames).replace('{r}', request));
}

/** One dimension's complaint: what is wrong, what to do instead, or both. */
function complaintClause(random: SeededRandom, dimension: StyleDimension, value: string): string {
  const problem = random.pick(partsOf(problems, dimension, value));
  const request = random.pick(partsOf(requests, dimension, value));
  const shape = random.weighted<'both' | 'problem-then-request' | 'request-only' | 'problem-only' | 'request-because'>([
    ['both', 0.28], ['problem-then-request', 0.17], ['request-only', 0.32], ['problem-only', 0.1], ['request-because', 0.13],
  ]);
  if (shape === 'both') return `${sentence(problem)} ${sentence(`${request}${random.chance(0.4) ? ', please' : ''}`)}`;
  if (shape === 'problem-then-request') return sentence(`${problem}, so ${request}`);
  if (shape === 'request-only') return requestOnly(random, request);
  if (shape === 'problem-only') return sentence(problem);
  return sentence(`${request}, ${problem}`);
}

export function composeComplaint(random: SeededRandom, wanted: Partial<StyleChoice>, answer: number): string {
  const dimensions = (Object.keys(wanted) as StyleDimension[]).filter((dimension) => wanted[dimension] !== undefined);
  const opener = random.chance(0.2) ? random.pick(stakes) : random.pick(complaintOpeners);
  const clauses = random.shuffle(dimensions).map((dimension) => complaintClause(random, dimension, wanted[dimension] as string));
  return withOpener(opener, clauses.join(' ')).replaceAll('{answer}', String(answer));
}

/**
 * A complaint's opener before its body: an opener that runs on ("Actually,", "Sorry, but") takes
 * the body in lower case, except "I".
 */
export function withOpener(opener: string, body: string): string {
  const runsOn = opener.endsWith(',') || opener.endsWith(':') || opener === 'Sorry, but' || opener === 'Almost, but';
  const joined = runsOn && !/^I\b/.test(body) ? body[0]!.toLowerCase() + body.slice(1) : body;
  return `${opener} ${joined}`.trim();
}

/** Thanks, naming now and then a style value the reply has (`replyStyle`). */
export function composeThanks(random: SeededRandom, replyStyle?: StyleChoice): string {
  // Stakes open thanks as often as complaints: when only complaints had them, the judge read
  // "my teacher ..." as a complaint and scored a satisfied student's "my teacher won't ..." -1.
  const opener = random.chance(0.2) ? `${random.pick(stakes)} ` : '';
  return `${opener}${thanksBody(random, replyStyle)}`;
}

function thanksBody(random: SeededRandom, replyStyle: StyleChoice | undefined): string {
  // Over half of all thanks name a style: users thank for what they asked for, in the words
  // their complaints use ("detail", "hand-written"), and a judge that met those words only in
  // complaints read such thanks as complaints.
  if (replyStyle !== undefined && random.chance(0.6)) {
    const dimension = random.pick(Object.keys(stylePraises) as StyleDimension[]);
    const praise = random.pick(partsOf(stylePraises, dimension, replyStyle[dimension]));
    const thanks = random.pick(thanksWords);
    const shape = random.weighted<'thanks-praise' | 'praise-thanks' | 'approval-praise' | 'that-is-the'>([
      ['thanks-praise', 0.25], ['praise-thanks', 0.2], ['approval-praise', 0.3], ['that-is-the', 0.25],
    ]);
    if (shape === 'that-is-the') {
      const noun = random.pick(partsOf(styleNouns, dimension, replyStyle[dimension]));
      const text = `${random.pick(approvals)}, ${random.pick(["that's", 'this is', 'that is'])} the ${noun} I ${random.pick(wantedVerbs)}.`;
      return withClosingThanks(random, text);
    }
    if (shape === 'thanks-praise') return `${thanks}, ${praise}.`;
    if (shape === 'praise-thanks') return `${sentence(praise).slice(0, -1)}, ${thanks.toLowerCase()}!`;
    const text = `${random.pick(approvals)}, ${praise}${random.chance(0.3) ? '!' : '.'}`;
    return withClosingThanks(random, text);
  }
  const shape = random.weighted<'thanks-praise' | 'praise-thanks' | 'praise' | 'thanks'>([
    ['thanks-praise', 0.35], ['praise-thanks', 0.3], ['praise', 0.2], ['thanks', 0.15],
  ]);
  const thanks = random.pick(thanksWords);
  const praise = random.pick(praises);
  let text: string;
  if (shape === 'thanks-praise') text = `${thanks}, ${praise}${random.chance(0.3) ? '!' : '.'}`;
  else if (shape === 'praise-thanks') {
    text = random.chance(0.5) ? `${sentence(praise).slice(0, -1)}, ${thanks.toLowerCase()}.` : `${sentence(praise).slice(0, -1)}! ${thanks}.`;
  } else if (shape === 'praise') text = `${sentence(praise).slice(0, -1)}${random.chance(0.5) ? '!' : '.'}`;
  else text = `${thanks}${random.chance(0.5) ? '!' : '.'}`;
  return random.chance(0.35) ? `${text} ${random.pick(moveOns)}` : text;
}

export function composeNeutral(random: SeededRandom): string {
  const opener = random.pick(neutralOpeners);
  const remark = random.pick(neutralRemarks);
  if (opener === '') return sentence(remark);
  return opener.endsWith(',') || opener.endsWith(':') ? `${opener} ${remark}` : `${opener} ${sentence(remark)}`;
}

/** Every part, for tests that check the composed next states against the held-out split. */
export const composedNextStateParts = { complaintOpeners, stakes, problems, requests, thanksWords, praises, stylePraises, styleNouns, wantedVerbs, approvals, closingThanks, moveOns, neutralOpeners, neutralRemarks };
