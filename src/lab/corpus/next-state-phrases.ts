/**
 * What a user says after a reply, for the judge task: complaints that ask for one style value,
 * thanks, and neutral or unrelated follow-ups. Train and held-out lists share no phrase, so the
 * judge's held-out accuracy measures how it handles next states worded differently from its
 * training data. `{answer}` stands for the problem's answer.
 *
 * Complaints say what the user wants instead ("number the steps"), since that is what the judge
 * turns into a hint; the built-in users' own complaints (core/user-preference.ts) are in neither
 * list.
 */
import type { StyleChoice, StyleDimension } from '../../builtin/style.js';
import type { CorpusSplit } from '../../rollouts/environments/word-problems.js';

type ComplaintPhrases = { readonly [D in StyleDimension]: { readonly [V in StyleChoice[D]]: readonly string[] } };

export interface NextStatePhrases {
  complaints: ComplaintPhrases;
  thanks: readonly string[];
  neutral: readonly string[];
}

const train: NextStatePhrases = {
  complaints: {
    formatting: {
      plain: [
        'Why is everything in bold or numbered? It looks like a robot wrote it.',
        'Can you drop the fancy formatting? Just write it normally.',
        "Too much formatting. I don't want bold text or lists.",
        'This looks machine-made with all the bold and the numbered steps.',
        'Please rewrite it without the bold bits and the list.',
        'No lists and no bold please, it is distracting.',
      ],
      bold: [
        "I can't spot the important numbers. Could you make them bold?",
        'Please highlight the key numbers in bold.',
        "Make the important parts stand out in bold, it's hard to skim.",
        'It is hard to skim. Bold the key values next time.',
        'Can you bold the main results?',
      ],
      numbered: [
        'This is a wall of text. Can you number the steps?',
        'Please split it into a numbered list of steps.',
        'I get lost in this. Number each step for me.',
        'Can you lay it out as steps 1, 2, 3?',
        'Put the steps in a numbered list please.',
      ],
    },
    length: {
      short: [
        "That's way too long. Just give me the short version.",
        'Too much text, keep it brief.',
        'Can you cut this down? I only need a few sentences.',
        "Shorter please, I don't need all that.",
        'Way too wordy for what I asked.',
      ],
      long: [
        "That's too short. I need a lot more detail.",
        'Can you explain it more thoroughly? This is too thin.',
        'Too brief, please write a longer explanation.',
        'I need a detailed answer, at least a full paragraph or two.',
        'More detail please, this barely says anything.',
      ],
    },
    tone: {
      warm: [
        'That sounds so cold. Can you be a bit more encouraging?',
        'Please be friendlier and more encouraging.',
        'A little warmth would help, this feels harsh.',
        'Could you sound kinder? Some encouragement would be nice.',
        'So dry. Be more supportive please.',
      ],
      neutral: [
        'Skip the cheerleading, just the facts please.',
        'Too much praise. Keep it neutral.',
        'Please drop the enthusiasm and be matter-of-fact.',
        "I don't need compliments, just a plain factual reply.",
        'Less gushing please, stay neutral.',
      ],
    },
    answerFormat: {
      line: [
        'Please put the final answer on its own line, like "Answer: {answer}".',
        "I can't find the result. End with a line that says Answer: and the number.",
        'Add a separate Answer: line at the end.',
        'Give me the answer on a separate line in the form Answer: N.',
        "Please finish with an 'Answer:' line.",
      ],
      boxed: [
        'Please put the final answer in a box, like \\boxed{{answer}}.',
        'Can you box the final answer?',
        "Use \\boxed{} for the result, that's how my class does it.",
        'Wrap the answer in \\boxed{} please.',
        'I need the answer boxed at the end.',
      ],
      sentence: [
        'Just tell me the answer in a normal sentence, no labels or boxes.',
        "Don't use an Answer: line or a box, say it in a sentence.",
        'Write the final answer as part of a sentence.',
        'No answer tags please, just say the result in words.',
        'State the result in a full sentence.',
      ],
    },
  },
  thanks: [
    "Thanks, that's exactly what I needed!",
    'Perfect, thank you.',
    'Great, that helps a lot. Thanks!',
    'Got it, thanks!',
    "That's clear now, thank you.",
    'Awesome, thanks. On to the next one.',
    "Yes, that's what I wanted. Thanks.",
  ],
  neutral: [
    'Hmm, let me think about it.',
    'Ok.',
    'What time is it?',
    'Hold on, someone is at the door.',
    "I'll look at this later.",
    'By the way, do you know any good books?',
  ],
};

const heldout: NextStatePhrases = {
  complaints: {
    formatting: {
      plain: [
        'The formatting is way over the top, just give me normal paragraphs.',
        'Lose the markdown styling and write it like a person would.',
        'All those stars and numbered points make it look generated.',
      ],
      bold: [
        'Nothing stands out here, put the key figures in bold type.',
        'Emphasize the key quantities with bold so I can find them.',
        'I need the crucial numbers to pop, use bold.',
      ],
      numbered: [
        'Hard to follow as one blob, give me an enumerated list of steps.',
        'Break the working into numbered points.',
        "I'd like each step on its own numbered line.",
      ],
    },
    length: {
      short: [
        'TL;DR please, this is far more than I need.',
        'Trim it down to the essentials.',
        'I asked a quick question, a quick reply would do.',
      ],
      long: [
        'This is skimpy, expand on every step.',
        'Way too terse, walk me through it at length.',
        'I wanted an in-depth explanation, not a couple of lines.',
      ],
    },
    tone: {
      warm: [
        'This reads like a robot scolding me, add some kindness.',
        'Could you cheer me on a bit? This is very flat.',
        'The tone is chilly, make it more upbeat and kind.',
      ],
      neutral: [
        'All the exclamation and flattery is annoying, be businesslike.',
        'Tone down the excitement, a sober answer is fine.',
        'No need to butter me up, stick to the facts.',
      ],
    },
    answerFormat: {
      line: [
        "Where's the result? Close with a dedicated line reading Answer: {answer}.",
        'Stick the final number on a last line labelled Answer:.',
        "I need an 'Answer:' label on its own line for my records.",
      ],
      boxed: [
        'My teacher wants the result inside a LaTeX box.',
        'Mark the final number with a box around it.',
        'Format the result as boxed math, please.',
      ],
      sentence: [
        'Drop the answer label and the box, work the result into the prose.',
        'Weave the final number into an ordinary sentence.',
        "I'd rather read the result in a plain sentence than a tag.",
      ],
    },
  },
  thanks: [
    'Cheers, this works for me.',
    "Appreciate it, that's spot on.",
    'Lovely, exactly right. Moving on.',
    'Many thanks, all clear.',
    'Sorted, thank you kindly.',
  ],
  neutral: [
    'Wait, I need to grab a coffee first.',
    'Did you see the game last night?',
    'Let me check with my friend and come back.',
    'Random question: is it going to rain today?',
  ],
};

export function nextStatePhrases(split: CorpusSplit): NextStatePhrases {
  return split === 'train' ? train : heldout;
}

export function complaintPhrases<D extends StyleDimension>(
  split: CorpusSplit,
  dimension: D,
  value: StyleChoice[D],
): readonly string[] {
  const byValue = nextStatePhrases(split).complaints[dimension] as Record<string, readonly string[]>;
  return byValue[value] ?? [];
}
