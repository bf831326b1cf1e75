/**
 * Next states that say how a reply went without naming a style, for the judge-only corpus
 * (judge-corpus.ts): explicit corrections with numbers, plain complaints, complaints that also
 * thank, negated praise (−1); negated complaints, thanks and moving on to a new question (+1); and
 * tool results, failed (−1) or succeeded (+1).
 *
 * Every text is composed from parts over a broad vocabulary, so a small judge learns which words
 * decide a verdict ("not", "but", "wrong", "next") rather than whole sentences. The shipped
 * held-out set (models/builtin-tiny/judge-heldout.jsonl) was written apart from these parts;
 * src/lab/measure/judge-heldout-set.test.ts checks that no composition reproduces one of its next
 * states or any five-word run of one.
 */
import type { SeededRandom } from '../../core/seeded-random.js';

const join = (...parts: readonly string[]): string => parts.filter((part) => part !== '').join(' ');
const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);
/** Ends a clause as a sentence, unless it already ends in punctuation. */
const sentence = (text: string): string => capitalize(/[.!?]$/.test(text) ? text : `${text}.`);

/** A wrong arithmetic reply and what the right result was. */
export interface Correction {
  operands: readonly [number, number];
  operator: '+' | '-' | '×';
  right: number;
  wrong: number;
}

const wrongWords: readonly string[] = [
  'wrong', 'incorrect', 'not right', 'off', 'a mistake', 'an error', 'way off', 'mistaken', 'false',
  'inaccurate', 'not it', 'miscalculated', 'bad maths', 'bad math', 'not the answer', 'off by a bit',
];

const wrongSubjects: readonly string[] = ['that is', "that's", 'this is', 'it is', "it's", 'your answer is', 'the result is', 'the sum is', 'your total is', 'that number is', '{wrong} is', 'the reply is'];

const correctionLeads: readonly string[] = [
  'no', 'nope', 'nah', 'hmm, no', 'sorry, no', 'uh, no', 'not quite', 'no way', 'hold on', 'wait', 'careful', 'oops', 'err', 'hm',
  'that can\'t be right', 'you slipped', 'you got it wrong', 'you messed up', 'you made a slip', 'check again', 'recount',
  'you counted wrong', 'that does not add up', 'you botched it', 'look again', 'try that again', 'redo it',
];

/** The right result, stated by the user. */
const rightStatements: readonly string[] = [
  'it should be {right}', 'the answer is {right}', 'the right answer is {right}', 'it is {right}', "it's {right}",
  '{right}, not {wrong}', 'it comes out to {right}', 'I make it {right}', 'my calculator says {right}', 'it equals {right}',
  '{a} {op} {b} equals {right}', '{a} {op} {b} = {right}', '{a} {op} {b} makes {right}', 'the total should be {right}',
  'the correct result is {right}', 'it has to be {right}', 'surely it is {right}', 'the real answer is {right}',
  'that gives {right}', 'you should get {right}', 'we need {right} here', '{right} is what I get', 'not {wrong} but {right}',
  'it is {right} and not {wrong}', 'the book says {right}', 'the key says {right}', 'my teacher got {right}',
];

const redoRequests: readonly string[] = [
  '', '', '', '', 'give it another try', 'please fix it', 'do it again', 'redo the sum', 'work it out again', 'have another go',
  'check your working', 'go over it once more', 'fix that', 'show me the right working', 'recalculate it please', 'one more try',
  'and keep it short', 'please be careful', 'do it properly this time', 'again please',
];

function fill(text: string, correction: Correction): string {
  return text
    .replaceAll('{right}', String(correction.right))
    .replaceAll('{wrong}', String(correction.wrong))
    .replaceAll('{a}', String(correction.operands[0]))
    .replaceAll('{b}', String(correction.operands[1]))
    .replaceAll('{op}', operatorWord(correction.operator));
}

function operatorWord(operator: Correction['operator']): string {
  return operator === '+' ? 'plus' : operator === '-' ? 'minus' : 'times';
}

/** A short verdict on the reply: "That is wrong", "Incorrect", "Wrong again". */
export function composeWrongVerdict(random: SeededRandom, correction: Correction | null): string {
  const word = random.pick(wrongWords);
  const subjects = correction === null ? wrongSubjects.filter((subject) => !subject.includes('{wrong}')) : wrongSubjects;
  return random.weighted<string>([
    [join(random.pick(subjects), word), 0.5],
    [word, 0.2],
    [`${word} again`, 0.1],
    [join(random.pick(['totally', 'completely', 'simply', 'just', 'clearly', 'still', 'all']), word), 0.2],
  ]);
}

/** An explicit correction, with the right number most of the time. */
export function composeCorrection(random: SeededRandom, correction: Correction): string {
  const parts: string[] = [];
  if (random.chance(0.45)) parts.push(sentence(random.pick(correctionLeads)));
  if (random.chance(0.75) || parts.length === 0) parts.push(sentence(composeWrongVerdict(random, correction)));
  const redo = random.pick(redoRequests);
  // At least two parts: a bare "Not correct." is a held-out sentence, never written whole here.
  if (random.chance(0.7) || (parts.length === 1 && redo === '')) parts.push(sentence(random.pick(rightStatements)));
  if (redo !== '') parts.push(sentence(redo));
  // Now and then the right number comes first: "54. That is wrong."
  const text = random.chance(0.15) ? parts.reverse().join(' ') : parts.join(' ');
  return fill(random.chance(0.1) ? text.toLowerCase() : text, correction);
}

/** What is wrong with a reply, naming no style. */
const plainComplaints: readonly string[] = [
  'you never answered the question', 'you ignored what I asked', 'that has nothing to do with my question', 'this misses the whole point',
  'you misunderstood my request', 'that is off topic', 'this is no use to me', 'that does not help', 'this is not helpful',
  'that is useless', 'this answers something else', 'you went off on a tangent', 'I asked for something different',
  'that is not what I was after', 'you got the task wrong', 'this is nonsense', 'it makes no sense', 'that is gibberish',
  'you dodged the question', 'the question was different', 'I never asked about that', 'that is a waste of my time',
  'this is a bad answer', 'it does not do what I asked', 'it is not even close', 'you missed what I meant', 'this is garbage',
  'that fails at the task', 'it is all wrong', 'you did not do what I said', 'you skipped the actual request', 'this is pointless',
  'you answered the wrong thing', 'this is rubbish', 'none of this is relevant', 'you lost the plot',
  // Complaints that a reply is broken, unfinished or bad overall, still naming no style.
  'the thing does not work', 'it is a mess', 'that is junk', 'you made it worse', 'it is still broken', 'it still fails', 'the code crashes',
  'that code will not even run', 'you stopped halfway', 'it is half done', 'this is incomplete', 'there is a bug in it', 'you have it backwards',
  'what a disappointing reply', 'a terrible reply', 'awful', 'this is a fail', 'you confused the two things', 'that reply is unusable',
  'it breaks everything', 'nope, that is a miss', 'you missed the mark completely', 'this is bogus', 'that is simply made up',
  'you invented that', 'none of that is true', 'you did the reverse of my request', 'I am not happy with this', 'this is worse than before',
];

const complaintIntensifiers: readonly string[] = ['', '', '', 'honestly,', 'seriously,', 'sorry, but', 'ugh,', 'come on,', 'hmm,', 'well,', 'again,', 'sadly,'];

export function composePlainComplaint(random: SeededRandom): string {
  const main = sentence(join(random.pick(complaintIntensifiers), random.pick(plainComplaints)));
  const tail = random.weighted<string>([['', 0.5], [sentence(random.pick(redoRequests.filter((request) => request !== '' && !request.includes('sum')))), 0.3], [sentence(random.pick(plainComplaints)), 0.2]]);
  return join(random.chance(0.15) ? `${random.pick(['No.', 'Nope.', 'Meh.', 'Bad.', 'Ugh.', 'Hmm.'])}` : '', main, tail);
}

const thanksWords: readonly string[] = [
  'thanks', 'thank you', 'thanks a lot', 'many thanks', 'thank you so much', 'thx', 'ty', 'cheers', 'much appreciated',
  'appreciated', 'I appreciate it', 'nice try', 'thanks for trying', 'so kind of you to help', 'thanks for the effort', 'ta',
  'good effort', 'I see you tried', 'thank you for replying', 'grateful for the help',
];

const warmWords: readonly string[] = [
  'I really appreciate the time you took', 'you answered so fast', 'you are always so helpful', 'it is kind of you to answer', 'I know you tried hard',
  'a lovely gesture', 'I value the effort', 'you were fast',
];

const contrastWords: readonly string[] = ['but', 'however,', 'even so,', 'yet', 'still,', 'though sadly', 'but sadly', 'only'];

/** Thanks followed (or preceded) by a complaint or correction: the complaint decides. */
export function composeThankfulComplaint(random: SeededRandom, correction: Correction | null): string {
  const complaint =
    correction !== null && random.chance(0.5)
      ? fill(join(composeWrongVerdict(random, correction), random.chance(0.6) ? `, ${random.pick(rightStatements)}` : ''), correction).replace(' ,', ',')
      : random.chance(0.5)
        ? composeWrongVerdict(random, null)
        : random.pick(plainComplaints);
  const thanks = random.pick(thanksWords);
  const shape = random.integer(0, 5);
  if (shape === 0) return join(sentence(complaint), sentence(`${thanks} anyway`.replace('anyway anyway', 'anyway')));
  // A long, warm thanks before a short complaint: the complaint still decides.
  if (shape === 1) return join(sentence(`${thanks}, ${random.pick(warmWords)}`), sentence(`${random.pick(contrastWords)} ${complaint}`));
  if (shape === 2) return join(sentence(thanks), composeNegatedPraise(random));
  if (shape === 3) return join(sentence(complaint), sentence(`${thanks} though`));
  return random.chance(0.5) ? sentence(`${thanks}, ${random.pick(contrastWords)} ${complaint}`) : join(sentence(thanks), sentence(`${random.pick(contrastWords)} ${complaint}`));
}

const praiseWords: readonly string[] = [
  'right', 'correct', 'good', 'helpful', 'useful', 'accurate', 'what I needed', 'great', 'any good', 'clear', 'true', 'valid',
  'okay', 'fine', 'usable', 'the answer', 'a real answer', 'much help', 'precise', 'acceptable', 'sensible', 'on point',
  'finished', 'complete', 'done', 'working', 'what I requested', 'solved', 'fixed', 'the right number', 'anywhere close', 'there yet', 'good enough',
];

const negations: readonly string[] = [
  'not {praise}', 'that is not {praise}', "that's not {praise}", 'this is not {praise}', "this isn't {praise}", "it isn't {praise}",
  'hardly {praise}', 'far from {praise}', 'not at all {praise}', 'not really {praise}', 'not exactly {praise}', 'by no means {praise}',
  "I wouldn't say it's {praise}", "I don't think that's {praise}", "I can't call this {praise}", 'nowhere near {praise}',
  'not {praise} in the least', 'definitely not {praise}', 'not quite {praise}', 'sadly not {praise}', "that's hardly {praise}",
  'in no way {praise}', "that wasn't {praise}", 'it was not {praise}', 'not {praise}, sorry',
];

const negationLeads: readonly string[] = ['No.', 'Hmm.', 'Well...', 'Nope.', 'Sorry.', 'Honestly?', 'Look,', 'Ehh.', 'Oh dear.', 'Mm, no.'];
const negationTails: readonly string[] = [
  "I'm afraid", 'sorry', 'try again', 'please redo it', 'not even close', 'look at it again', 'do better', 'fix it please', 'far from it', 'I expected more',
];

/**
 * A praise word under a negation: "not correct", "hardly helpful". Negative. Always with a lead or
 * a tail, so the bare two-word sentences of the held-out set are never written whole.
 */
export function composeNegatedPraise(random: SeededRandom): string {
  const text = random.pick(negations).replaceAll('{praise}', random.pick(praiseWords));
  return random.chance(0.4) ? join(random.pick(negationLeads), sentence(text)) : sentence(`${text}, ${random.pick(negationTails)}`);
}

const negatedProblems: readonly string[] = [
  'no complaints', 'no problems', 'no issues', 'nothing to fix', 'nothing to change', 'nothing wrong', 'no errors at all',
  'not a single mistake', 'no mistakes at all', 'nothing off', 'no objections', 'zero issues', 'no notes', 'nothing to add',
  'not bad at all', "can't complain", "couldn't ask for more", 'no quibbles', 'nothing missing', 'no corrections needed',
  'I have no complaints', 'I see no problem', 'I found nothing wrong', 'not wrong at all', 'no bugs', "I can't find a fault",
  'no changes needed', 'not a thing to fix', 'nothing I would change', 'no need to redo it', 'nothing to correct',
  'no gripes', 'zero complaints on my side', 'I did not spot a single problem', 'not one thing wrong', 'no mistakes that I can see',
  'nothing to object to', 'you did not miss anything', 'nothing is broken', 'there is no error in it', 'not a bad answer at all',
  'I have nothing to complain about', 'no fault in it', 'no problem whatsoever', "I wouldn't touch it", 'nothing needs fixing',
  'no typos, no errors', 'it is not wrong', "that's not bad", 'no flaws', 'nothing amiss', 'not a hair out of place',
];

const positiveTails: readonly string[] = [
  'good job', 'well done', 'nice', 'great', 'all good', 'perfect', 'spot on', 'keep it up', 'nice work', 'lovely', 'excellent', 'good stuff', 'happy with it',
  'much appreciated, truly', 'cheers for that', 'much obliged', 'I am pleased', 'this is fine as it is', 'accepted', 'let us keep it', 'ship it',
];

/** A complaint word under a negation: "no complaints", "nothing wrong". Positive. */
export function composeNegatedComplaint(random: SeededRandom): string {
  const main = random.pick(negatedProblems);
  const where = random.pick(['', '', ' here', ' there', ' with that', ' with this', ' from me', ' in this one']);
  const tail = random.pick(positiveTails);
  // Always with a tail: the bare "no complaints" sentences of the held-out set are never written whole.
  return random.chance(0.5) ? sentence(`${main}${where}, ${tail}`) : join(sentence(`${main}${where}`), sentence(tail));
}

const acknowledgements: readonly string[] = [
  'ok', 'okay', 'alright', 'all right', 'fine', 'cool', 'good', 'great', 'nice', 'right', 'got it', 'sure', 'noted', 'perfect',
  'understood', 'makes sense', 'thanks', 'lovely', 'super', 'brilliant', 'that works', 'yep', 'yes', 'great stuff', 'neat', '',
];

const nextMarkers: readonly string[] = [
  'next', 'next one', 'now', 'moving on', 'another question', 'one more', 'new question', 'then', 'and now', 'carrying on',
  "let's do another", 'on to the next', 'follow-up', 'second question', 'now tell me', 'next up', 'now please', 'also',
  'and', 'what about this', 'a harder one', 'same again', 'here is another', 'last one', 'okay, another', 'quick one', 'different topic', 'new task',
];

/** New questions a user moves on to. `{a}` and `{b}` are numbers. */
const nextQuestions: readonly string[] = [
  'what is {a} multiplied by {b}?', 'what is {a} plus {b}?', 'how much is {a} minus {b}?', 'can you divide {a} by {b}?',
  'what is half of {a}?', 'what is {a} squared?', 'is {a} a prime number?', 'what is the capital of Peru?',
  'how do I say "goodbye" in Italian?', 'what rhymes with "moon"?', 'spell "banana" backwards',
  'what is the opposite of "early"?', 'how many days are in a leap year?', 'how many minutes are in {a} hours?',
  'write a short poem about the sea', 'name two planets', 'what does CPU stand for?', 'sort these numbers: {a}, {b}, 3',
  'convert {a} km to metres', 'what colour do blue and yellow make?', 'how do I make a list in Markdown?', 'what year comes after {a}?',
  'count the vowels in "elephant"', 'what is {a} percent of 200?', 'give me a fun fact about owls', 'round {a}.7 to a whole number',
  'what is the plural of "mouse"?', 'how many legs does a spider have?', 'translate "cat" into German', 'list three kinds of cloud',
  '{a} + {b}?', '{a} × {b}?', 'and {a} minus {b}?', 'do {a} plus {b} for me', 'work out {a} times {b}', 'how about {a} times {b}?', 'try {a} - {b}',
  'can you add {a} and {b}?', 'multiply {a} by {b}', 'what do {a} and {b} add up to?', 'and if I take {b} from {a}?', 'double {a}, please',
  'write a haiku about rain', 'explain what an API is', 'who wrote "Hamlet"?', 'how do I reverse a list in Python?', 'summarise the plot of Cinderella',
  'fix the typo in "recieve"', 'what time zone is Tokyo in?', 'give me a synonym for "fast"', 'how do I centre a div?', 'name a fruit that starts with K',
];

export function composeMovingOn(random: SeededRandom): string {
  const question = random
    .pick(nextQuestions)
    .replaceAll('{a}', String(random.integer(2, 60)))
    .replaceAll('{b}', String(random.integer(2, 30)));
  const ack = random.pick(acknowledgements);
  const marker = random.pick(nextMarkers);
  const shape = random.integer(0, 5);
  if (shape === 0) return join(ack === '' ? '' : sentence(ack), sentence(`${marker}: ${question}`));
  if (shape === 1) return join(ack === '' ? '' : `${capitalize(ack)},`, random.chance(0.5) ? `${marker}, ${question}` : question);
  if (shape === 2) return sentence(`${marker}: ${question}`);
  if (shape === 3) return join(ack === '' ? 'Thanks.' : sentence(ack), capitalize(question));
  // No acknowledgement at all: a bare new question is moving on too.
  if (shape === 4) return sentence(random.chance(0.5) ? question : `${marker}, ${question}`);
  return join(sentence(`${ack === '' ? 'good' : ack}, ${random.pick(['that is done', 'that is settled', 'got that one', 'understood that', 'so far so good'])}`), capitalize(question));
}

const agreement: readonly string[] = [
  'that is right', "that's correct", 'precisely right', 'yes, that matches', 'that matches my answer', 'correct', 'right answer',
  'that is what I got too', 'spot on', 'bang on', 'that checks out', 'looks right to me', 'perfect answer',
  'that helps', 'very helpful', 'clear now', 'great explanation', 'that works', 'just what I needed', 'that solved it',
];

/** Thanks and agreement, in many combinations. */
export function composeAgreement(random: SeededRandom): string {
  const thanks = random.pick(['thanks', 'thank you', 'many thanks', 'cheers', 'thanks so much', 'thank you kindly', 'ta', 'much obliged', 'thx', 'appreciated']);
  const agreed = random.pick(agreement);
  return random.weighted<string>([
    [sentence(`${agreed}, ${thanks}`), 0.35],
    [join(sentence(thanks), sentence(agreed)), 0.3],
    [sentence(`${agreed}, ${thanks} ${random.pick(['a lot', 'again', 'for this', 'for helping'])}`), 0.15],
    [sentence(agreed), 0.2],
  ]);
}
