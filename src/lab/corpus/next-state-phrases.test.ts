import { describe, expect, it } from 'vitest';
import { mentionsDimension } from '../../builtin/grounded-hint.js';
import { createSeededRandom } from '../../core/seeded-random.js';
import { styleDimensions, styleValues, type StyleDimension } from '../../builtin/style.js';
import { composeComplaint, composeThanks } from './composed-next-states.js';
import { nextStatePhrases } from './next-state-phrases.js';

describe("the judge corpus's complaints and the hint grounding's cues", () => {
  it('a complaint about a dimension uses a word the grounding check knows for it, so its right hint is kept', () => {
    // Composed complaints are the built-in judge's training data; every one must pass, or the
    // check would drop the hints the judge was taught to give.
    const random = createSeededRandom('grounding-cues');
    const missed: string[] = [];
    for (let index = 0; index < 3000; index += 1) {
      const dimension = styleDimensions[index % styleDimensions.length] as StyleDimension;
      const options = styleValues[dimension];
      const value = options[Math.floor(index / styleDimensions.length) % options.length] as string;
      const complaint = composeComplaint(random, { [dimension]: value }, 7);
      if (!mentionsDimension(complaint, dimension)) missed.push(`${dimension}=${value}: ${complaint}`);
    }
    for (const split of ['train', 'heldout'] as const) {
      for (const dimension of styleDimensions) {
        for (const phrases of Object.values(nextStatePhrases(split).complaints[dimension]) as string[][]) {
          for (const phrase of phrases) if (!mentionsDimension(phrase, dimension)) missed.push(`${split} ${dimension}: ${phrase}`);
        }
      }
    }
    expect(missed).toEqual([]);
  });

  it('plain thanks name no dimension, so a hint the judge writes on one is dropped', () => {
    const random = createSeededRandom('grounding-thanks');
    let mentioning = 0;
    const count = 500;
    for (let index = 0; index < count; index += 1) {
      const thanks = composeThanks(random);
      if (styleDimensions.some((dimension) => mentionsDimension(thanks, dimension))) mentioning += 1;
    }
    // Loose cues ("more", "text", "follow") catch some thanks; most stay clean.
    expect(mentioning / count).toBeLessThan(0.35);
  });
});
