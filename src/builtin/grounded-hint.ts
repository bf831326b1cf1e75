/**
 * A hindsight hint has to be about something the next state talks about. The judge is asked to
 * extract the hint from what the user said; a small judge that cannot read a message still writes
 * a fluent style hint for it: "Write at least 100 words." for "Way too formatted, …", "Keep the
 * tone neutral …" for the thanks "Nice, my teacher won't suspect a thing.", and distilling such a
 * hint teaches a style nobody asked for. With `--judge-hint-grounding` the built-in judge keeps each
 * sentence of a hint that names a style dimension only when the next state uses a word of that
 * dimension (`dimensionCues`); sentences that name no dimension this reader knows are kept as they
 * are. It is off by default: some invented hints happen to be what a user wants (docs/judging.md).
 *
 * The cues are deliberately loose (any word a user might use about the dimension, "more" and
 * "full" for length): a wrong cue only lets a hint through that the judge wrote anyway, while a
 * missing one drops a right hint and leaves that turn to the reward alone.
 */
import { parseStyleHint } from './style-hint.js';
import { styleDimensions, type StyleDimension } from './style.js';

/** A case-insensitive pattern matching any of `words` (regex fragments) as whole words. */
function anyWord(words: readonly string[]): RegExp {
  return new RegExp(`\\b(?:${words.join('|')})\\b`, 'i');
}

export const dimensionCues: { readonly [D in StyleDimension]: RegExp } = {
  formatting: anyWord([
    'bold\\w*', 'stars?', 'asterisks?', 'lists?', 'bullet\\w*', 'number\\w*', 'enumerat\\w*', 'format\\w*', 'markdown',
    'mark-?up', 'layout', 'laid out', 'fancy', 'clutter\\w*', 'robot\\w*', 'machine\\w*', 'ai', 'chatbot', 'computer',
    'generated', 'hand-?written', 'plain\\w*', 'stand out', 'stands out', 'pop', 'highlight\\w*', 'emphasi\\w*', 'skim\\w*',
    'wall of text', 'blob', 'steps?', 'structur\\w*', 'headings?', 'points?', 'styling', 'artificial', 'fake', 'natural\\w*',
    'normal\\w*', 'homework', 'my own', 'i wrote', 'wrote it', 'written', 'ordinary', 'typed', 'a person', 'key', 'buried',
    'skip over', 'one paragraph', 'working', 'follow', 'track',
  ]),
  length: anyWord([
    'long\\w*', 'short\\w*', 'brief\\w*', 'length', 'detail\\w*', 'words', 'wordy', 'thin', 'terse', 'thorough\\w*',
    'explain\\w*', 'explanation', 'paragraphs?', 'elaborat\\w*', 'expand\\w*', 'barely', 'more', 'less', 'cut', 'concise',
    'feedback', 'full', 'depth', 'essay', 'sentences?', 'text', 'properly', 'lengthy', 'ramble\\w*', 'to the point',
    'quick\\w*', 'summar\\w*', 'tl;?dr', 'anything', 'enough', 'flesh\\w*', 'spell out', 'skimp\\w*', 'skips?', 'lines',
    'trim\\w*', 'essentials', 'condens\\w*', 'boil\\w*', 'padding', 'on and on', 'sum it up', 'small question', 'read all',
    'too much', 'shorten\\w*', 'a few', 'in depth', 'go through', 'step by step', 'say much', 'write a lot', 'add a lot',
    'not nearly',
  ]),
  tone: anyWord([
    'warm\\w*', 'cold\\w*', 'dry', 'harsh\\w*', 'friendl\\w*', 'kind\\w*', 'encourag\\w*', 'discourag\\w*', 'prais\\w*',
    'cheer\\w*', 'enthusias\\w*', 'gush\\w*', 'compliment\\w*', 'flatter\\w*', 'tone', 'supportive', 'rude', 'proud',
    'neutral', 'matter-of-fact', 'factual', 'facts', 'emotion\\w*', 'rejection', 'gentle', 'gentler', 'patient', 'positive',
    'negative', 'upbeat', 'feel good', 'stiff', 'robotic', 'sweet', 'sugar\\w*', 'over the top', 'something nice', 'grump\\w*',
    'flat', 'stern', 'scold\\w*', 'unfriendl\\w*', 'unkind', 'exclamation\\w*', 'calm\\w*', 'professional', 'bubbly',
    'soften\\w*', 'sober', 'tone it down', 'kids need', 'fake with',
  ]),
  // `\boxed` starts with a backslash, which no word boundary precedes, so it is its own alternative.
  answerFormat: new RegExp(`${anyWord(['answer\\w*', 'box\\w*', 'label\\w*', 'result\\w*', 'final', 'line', 'sentence', 'tag\\w*', 'the number', 'in the text']).source}|\\\\boxed`, 'i'),
};

/** Sentences, split only where punctuation is followed by space, so "2.5" stays one number. */
function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== '');
}

/** Whether the next state uses a word of the dimension. */
export function mentionsDimension(nextState: string, dimension: StyleDimension): boolean {
  return dimensionCues[dimension].test(nextState);
}

/**
 * The hint without its sentences about style dimensions the next state never mentions, and without
 * repeated sentences; null when nothing is left. A sentence naming several dimensions stays when
 * the next state mentions one.
 */
export function groundedHint(hint: string, nextState: string): string | null {
  const sentences = sentencesOf(hint);
  const kept = sentences.filter((sentence) => {
    const read = parseStyleHint(sentence);
    const named = styleDimensions.filter((dimension) => read[dimension] !== undefined);
    return named.length === 0 || named.some((dimension) => mentionsDimension(nextState, dimension));
  });
  // The judge sometimes repeats a sentence; once is what it asks.
  const unique = [...new Set(kept)];
  if (unique.length === 0) return null;
  return unique.length === sentences.length ? hint.trim() : unique.join(' ');
}
