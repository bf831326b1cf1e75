import { describe, expect, it } from 'vitest';
import { createSeededRandom, type SeededRandom } from '../core/seeded-random.js';
import { styleDimensions, styleValues, type StyleChoice } from './style.js';
import { canonicalStyleHint, hintAsksForChange, parseStyleHint, phrasingsOf, styleHintText } from './style-hint.js';

/** Each dimension present with probability 1/2, with a random value. */
function randomChoices(random: SeededRandom): Partial<StyleChoice> {
  const choices: Partial<StyleChoice> = {};
  for (const dimension of styleDimensions) {
    if (random.chance(0.5)) (choices as Record<string, string>)[dimension] = random.pick(styleValues[dimension]);
  }
  return choices;
}

describe('styleHintText and parseStyleHint', () => {
  it('offers at least three phrasings per value, each read back as exactly that value', () => {
    for (const dimension of styleDimensions) {
      for (const value of styleValues[dimension]) {
        const phrasings = phrasingsOf(dimension, value as never);
        expect(phrasings.length).toBeGreaterThanOrEqual(3);
        for (const phrasing of phrasings) {
          expect(parseStyleHint(phrasing), phrasing).toEqual({ [dimension]: value });
        }
      }
    }
  });

  it('round-trips random multi-dimension hints', () => {
    const random = createSeededRandom(11);
    for (let index = 0; index < 2000; index += 1) {
      const choices = randomChoices(random);
      const text = styleHintText(choices, random);
      expect(parseStyleHint(text), text).toEqual(choices);
    }
  });

  it('words each choice one fixed way, in dimension order, read back as the choice', () => {
    const random = createSeededRandom(5);
    for (let index = 0; index < 500; index += 1) {
      const choices = randomChoices(random);
      const text = canonicalStyleHint(choices);
      expect(parseStyleHint(text), text).toEqual(choices);
      expect(canonicalStyleHint({ ...choices })).toBe(text);
    }
    expect(canonicalStyleHint({ tone: 'warm', formatting: 'plain' })).toBe("Please don't use bold text or numbered lists. Be warm and encouraging.");
    expect(canonicalStyleHint({})).toBe('');
  });

  it('varies its phrasing and order', () => {
    const random = createSeededRandom(2);
    const texts = new Set<string>();
    for (let index = 0; index < 100; index += 1) texts.add(styleHintText({ formatting: 'plain', tone: 'warm' }, random));
    expect(texts.size).toBeGreaterThan(10);
    expect(styleHintText({}, random)).toBe('');
  });

  it('reads plainly worded hints from other judges', () => {
    expect(parseStyleHint('The user dislikes bold and numbered lists; write in plain prose.')).toEqual({
      formatting: 'plain',
    });
    expect(parseStyleHint("Don't use bold, but number the steps.")).toEqual({ formatting: 'numbered' });
    expect(parseStyleHint('The reply was too short. Explain the grading in detail.')).toEqual({ length: 'long' });
    expect(parseStyleHint('Keep it under 40 words and skip the cheerleading.')).toEqual({
      length: 'short',
      tone: 'neutral',
    });
    expect(parseStyleHint("Don't box the answer or use an Answer: line.")).toEqual({ answerFormat: 'sentence' });
    expect(parseStyleHint('Be more encouraging, say well done!')).toEqual({ tone: 'warm' });
    expect(parseStyleHint('Double-check the arithmetic.')).toEqual({});
  });

  it('asks for a change unless the reply already has every style value the hint asks for', () => {
    const boxedBold = 'First add the apples.\n\n**Total:** 3 + 4 = 7.\n\n\\boxed{7}';
    expect(hintAsksForChange('Put the final answer in \\boxed{}.', boxedBold)).toBe(false);
    expect(hintAsksForChange("Please don't use bold text or numbered lists.", boxedBold)).toBe(true);
    // One dimension already met and one not: the hint still asks for a change.
    expect(hintAsksForChange('Put the final answer in \\boxed{}. No bold please.', boxedBold)).toBe(true);
    expect(hintAsksForChange('Keep it short.', 'She has 7 apples.')).toBe(false);
    expect(hintAsksForChange('Write at least 100 words.', 'She has 7 apples.')).toBe(true);
    // Hints outside the style vocabulary (arithmetic, content) are corrections this check cannot read.
    expect(hintAsksForChange('Check the sum: 3 + 4 is 7, not 8.', 'She has 7 apples.')).toBe(true);
  });
});
