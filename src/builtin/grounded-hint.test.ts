import { describe, expect, it } from 'vitest';
import { styleHintPhrasings } from './style-hint.js';
import { groundedHint, mentionsDimension } from './grounded-hint.js';
import { incoherenceComplaints } from './reply-coherence.js';
import { builtinUsers } from './user-preference.js';
import { styleDimensions } from './style.js';

const plain = "Please don't use bold text or numbered lists.";
const sentence = 'State the final answer in a normal sentence.';
const long = 'Write at least 100 words.';
const short = 'Keep it short.';
const warm = 'Be warm and encouraging.';
const neutral = 'Keep the tone neutral and matter-of-fact.';

describe('groundedHint', () => {
  it("keeps what the built-in users' complaints ask for and drops the built-in judge's misreadings of them", () => {
    const [aiWrote, nobodyBoxes, normalKid, wayTooFormatted] = builtinUsers.student.complaints;
    expect(groundedHint(plain, aiWrote as string)).toBe(plain);
    expect(groundedHint(sentence, nobodyBoxes as string)).toBe(sentence);
    expect(groundedHint(`${plain} ${sentence}`, normalKid as string)).toBe(`${plain} ${sentence}`);
    expect(groundedHint(`${plain} ${warm}`, normalKid as string)).toBe(plain);
    // Hints the built-in judge writes for "Way too formatted, …".
    expect(groundedHint(long, wayTooFormatted as string)).toBeNull();
    expect(groundedHint(short, wayTooFormatted as string)).toBeNull();
    expect(groundedHint(plain, wayTooFormatted as string)).toBe(plain);
    for (const complaint of builtinUsers.ta.complaints) expect(groundedHint(long, complaint)).toBe(long);
    for (const complaint of builtinUsers.teacher.complaints) expect(groundedHint(warm, complaint)).toBe(warm);
  });

  it('leaves no style hint on a thanks or on a complaint that names no style', () => {
    const misread = [neutral, long, `${long} ${neutral}`, 'Write at least 100 words. Put the final answer in \\boxed{}.'];
    for (const hint of misread) expect(groundedHint(hint, "Nice, my teacher won't suspect a thing.")).toBeNull();
    for (const complaint of Object.values(incoherenceComplaints).flat()) {
      for (const hint of [plain, short, neutral, warm]) expect(groundedHint(hint, complaint)).toBeNull();
    }
  });

  it('keeps sentences that name no style as they are, and drops repeated sentences', () => {
    expect(groundedHint('Check the sum: 2 + 3 is 5, not 6.', 'That is wrong, redo it.')).toBe('Check the sum: 2 + 3 is 5, not 6.');
    expect(groundedHint(`Use the metric units. ${long}`, 'Use metres, please.')).toBe('Use the metric units.');
    expect(groundedHint(`${sentence} ${sentence}`, 'No box, say it in words.')).toBe(sentence);
    expect(groundedHint('', 'anything')).toBeNull();
    // Kept whole, a hint comes back exactly as written.
    expect(groundedHint('Use 2.5 kg.\nNot 3.', 'Wrong weight.')).toBe('Use 2.5 kg.\nNot 3.');
  });

  it("reads every phrasing of the project's hints as naming a dimension, so the check applies to all of them", () => {
    // A phrasing the reader did not parse would pass ungrounded; each must name its own dimension.
    for (const dimension of styleDimensions) {
      for (const phrasings of Object.values(styleHintPhrasings[dimension]) as string[][]) {
        for (const phrasing of phrasings) expect(groundedHint(phrasing, 'What time is it?'), phrasing).toBeNull();
      }
    }
  });

  it('finds each dimension in the words users use for it', () => {
    expect(mentionsDimension('Too much markdown styling.', 'formatting')).toBe(true);
    expect(mentionsDimension('Way too wordy.', 'length')).toBe(true);
    expect(mentionsDimension('So dry and cold.', 'tone')).toBe(true);
    expect(mentionsDimension('Where is the result?', 'answerFormat')).toBe(true);
    expect(mentionsDimension("Nice, my teacher won't suspect a thing.", 'tone')).toBe(false);
  });
});
