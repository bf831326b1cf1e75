/**
 * Judge examples for replies that are broken before any style is asked about: cut off, stuck
 * repeating a word, or about something else than the message. A policy under training produces
 * them, and users say so ("you stopped mid-sentence"). A judge that never met such a complaint
 * reads "That has nothing to do with what I asked you." after a two-word "Well done!" as thanks
 * (+1), and RL then trains the broken reply up. Verdict −1; no style hint, since the complaint
 * names no style to change.
 *
 * Training split only: the personalization experiment's simulated users complain about broken
 * replies in words of their own (`../reply-coherence.ts`), which a test keeps apart from these.
 */
import type { SeededRandom } from '../../core/seeded-random.js';
import { sentence, withOpener } from './composed-next-states.js';

export const replyBreakages = ['cut-off', 'repetition', 'off-task'] as const;
export type ReplyBreakage = (typeof replyBreakages)[number];

const openers: readonly string[] = [
  '', '', '', 'Hmm.', 'Um.', 'Huh?', 'What?', 'Erm,', 'Sorry, but', 'Wait,', 'Ugh.', 'Seriously?', 'Hello?', 'Come on.', 'Oh no.',
];

const problems: { readonly [B in ReplyBreakage]: readonly string[] } = {
  'cut-off': [
    'you stopped mid-sentence', 'the answer is unfinished', 'it ends halfway through', 'you never finished the reply',
    'the last sentence is missing its end', 'it just cuts out', 'half of the reply is missing', 'it trails off before the end',
    'you got cut short', 'the reply is incomplete',
  ],
  repetition: [
    'it repeats the same word again and again', 'you are stuck in a loop', 'this is the same phrase over and over',
    'the words just repeat', 'it makes no sense, the same word again and again', 'it is a word salad',
    'the reply is garbled', 'this is nonsense', 'it stutters the same thing', 'it is full of repeated words',
  ],
  'off-task': [
    'you answered a different question', 'this is not what I asked', 'that is off topic', 'you ignored my question',
    'this is about something else', 'it does not answer my message', 'that reply is unrelated to my question',
    'you did not even look at my problem', 'this is a random answer', 'that is not my problem at all',
    'you are talking about something else', 'my question is still unanswered',
  ],
};

const requests: { readonly [B in ReplyBreakage]: readonly string[] } = {
  'cut-off': ['finish the answer', 'give me the whole reply', 'write it out to the end', 'complete the last sentence', 'send the rest'],
  repetition: ['write normal sentences', 'answer properly this time', 'give me a real answer', 'say it in plain words', 'start again and make sense'],
  'off-task': ['answer my actual question', 'read my message again', 'look at the problem I sent', 'stick to what I asked', 'deal with my problem'],
};

/** A user's complaint about a broken reply: an opener, what is broken and, often, what to do. */
export function composeBrokenReplyComplaint(random: SeededRandom, breakage: ReplyBreakage): string {
  const problem = random.pick(problems[breakage]);
  const request = random.pick(requests[breakage]);
  const shape = random.weighted<'problem' | 'both' | 'problem-so-request'>([['problem', 0.35], ['both', 0.4], ['problem-so-request', 0.25]]);
  const body =
    shape === 'problem' ? sentence(problem) : shape === 'both' ? `${sentence(problem)} ${sentence(`please ${request}`)}` : sentence(`${problem}, so ${request}`);
  return withOpener(random.pick(openers), body);
}

/** What the judge reads before its box, one wording per breakage. */
export const brokenReplyReadings: { readonly [B in ReplyBreakage]: string } = {
  'cut-off': 'The user says the reply is unfinished, so the reply missed.',
  repetition: 'The user says the reply is garbled, so the reply missed.',
  'off-task': 'The user says the reply does not answer the message, so the reply missed.',
};

/** Replies a training policy drifts to that answer nothing: its own judge phrases, one-word praise. */
const strayReplies: readonly string[] = [
  'Well done!', 'Excellent!', 'Great job!', 'The user is satisfied and moves on.', 'The reply was accepted.', 'Thanks!',
  'You are welcome.', 'Good luck!', 'Nice work, keep going!', 'The next message carries no correction.',
];

/**
 * The reply broken as `breakage` says: a whole reply cut at a word, a start that falls into a
 * loop of one word, or an answer to another task (`otherReply`) or a stray line.
 */
export function breakReply(random: SeededRandom, reply: string, otherReply: string, breakage: ReplyBreakage): string {
  const words = reply.split(/\s+/).filter((word) => word !== '');
  if (breakage === 'cut-off') {
    const keep = Math.max(3, Math.floor(words.length * (0.2 + random.next() * 0.6)));
    return words.slice(0, keep).join(' ').replace(/[.!?,:;]+$/, '');
  }
  if (breakage === 'repetition') {
    const keep = random.integer(2, Math.max(2, Math.min(12, words.length - 1)));
    const start = words.slice(0, keep);
    const looped = start[start.length - 1] as string;
    const unit = random.chance(0.7) ? [looped] : words.slice(Math.max(0, keep - 3), keep);
    const loops = random.integer(4, 16);
    return [...start, ...Array.from({ length: loops }, () => unit).flat()].join(' ');
  }
  return random.chance(0.6) ? otherReply : random.pick(strayReplies);
}
