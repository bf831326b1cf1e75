/**
 * Whether a reply still does its job, whatever its style: the check a simulated user makes before
 * its preference. A person shown a reply cut off at the token limit, a run of commas or a reply
 * about nothing in their message complains about that, not about the bold text. Without this check
 * a policy that has collapsed into repeating one token "satisfies" the student (no bold, no lists)
 * and one that repeats "wonderful effort" satisfies the teacher.
 */

export type ReplyIncoherence = 'cut-off' | 'repetition' | 'off-task';

/** A character other than a rule line's `-`, `=` or `_` eight times in a row: `,,,,,,,,`, `11111111`. */
const repeatedCharacter = /([^\s\-=_])\1{7}/u;
/** Words too common to show a reply is about the message. */
const commonWords = new Set([
  'about', 'after', 'again', 'also', 'because', 'been', 'before', 'being', 'could', 'does', 'each', 'from', 'have',
  'here', 'into', 'just', 'like', 'make', 'many', 'more', 'much', 'only', 'other', 'over', 'please', 'should', 'some',
  'than', 'that', 'their', 'them', 'then', 'there', 'these', 'they', 'this', 'those', 'very', 'what', 'when', 'where',
  'which', 'while', 'will', 'with', 'would', 'your',
]);

function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/\p{L}+/gu) ?? [];
}

/** The longest run of one word repeated back to back ("at at at"), punctuation ignored. */
function longestWordRun(words: readonly string[]): number {
  let longest = words.length === 0 ? 0 : 1;
  let run = 1;
  for (let index = 1; index < words.length; index += 1) {
    run = words[index] === words[index - 1] ? run + 1 : 1;
    if (run > longest) longest = run;
  }
  return longest;
}

function numbersOf(text: string): string[] {
  return text.match(/\d+(?:\.\d+)?/g) ?? [];
}

/** What a message is about: its numbers and its words of four letters or more (names, objects), common words left out. */
export function contentWordsOf(message: string): Set<string> {
  return new Set([...numbersOf(message), ...wordsOf(message).filter((word) => word.length >= 4 && !commonWords.has(word))]);
}

/**
 * What is wrong with a reply before any preference is asked, or null when nothing is:
 * `cut-off` when it stopped at the token limit, `repetition` when a character repeats eight times
 * or a word three times back to back, `off-task` when it shares no number and no content word with the
 * message it answers (when the message has any).
 */
export function replyIncoherence(reply: { text: string; finishReason: string | null }, message: string): ReplyIncoherence | null {
  if (reply.finishReason === 'length') return 'cut-off';
  const words = wordsOf(reply.text);
  if (repeatedCharacter.test(reply.text) || longestWordRun(words) >= 3) return 'repetition';
  const wanted = contentWordsOf(message);
  if (wanted.size > 0 && ![...words, ...numbersOf(reply.text)].some((word) => wanted.has(word))) return 'off-task';
  return null;
}

/**
 * What a simulated user says to an incoherent reply, whatever its preference. Worded apart from the
 * judge corpus's phrase lists, so the built-in judge meets them unseen, as it would a real user.
 */
export const incoherenceComplaints: { readonly [R in ReplyIncoherence]: readonly string[] } = {
  'cut-off': ['Your reply just stops halfway, I can not use half an answer.', 'It broke off in the middle, finish what you were saying.'],
  repetition: ['This is gibberish, it keeps saying the same thing over and over.', 'What happened here? It is just one word repeated.'],
  'off-task': ['That has nothing to do with what I asked you.', 'Did you read my message? This is not about my question at all.'],
};
