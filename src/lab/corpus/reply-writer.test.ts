import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../core/seeded-random.js';
import { classifyStyle, countWords, type StyleChoice } from '../../builtin/style.js';
import { generalRemarks, writeReply, type ReplyContent } from './reply-writer.js';

const verbose: ReplyContent = {
  core: [
    (m) => `The first step takes the ${m('twelve')} apples that were in the basket at the start of the day.`,
    (m) => `The second step adds the ${m('five')} apples that arrived later, which gives the total.`,
  ],
  details: [],
  answer: 17,
  answerLead: 'The answer is',
  answerSentences: ['So there are 17 apples.'],
  neutralOpeners: ['Here is a fairly long neutral opening sentence for this reply.'],
  warmOpeners: ['What a wonderful and very thoughtful question this is!', 'Excellent!'],
  warmClosers: ['Keep up the great work!'],
};

describe('writeReply', () => {
  it('shrinks the opener to keep a verbose short reply under 40 words, keeping its tone', () => {
    const random = createSeededRandom(1);
    for (const tone of ['warm', 'neutral'] as const) {
      for (let index = 0; index < 50; index += 1) {
        const style: StyleChoice = { formatting: 'plain', length: 'short', tone, answerFormat: 'sentence' };
        const reply = writeReply(verbose, style, random);
        expect(countWords(reply), reply).toBeLessThan(40);
        expect(classifyStyle(reply)).toEqual(style);
      }
    }
  });

  it('pads long replies with general remarks when the content has no details', () => {
    const random = createSeededRandom(2);
    const style: StyleChoice = { formatting: 'numbered', length: 'long', tone: 'neutral', answerFormat: 'boxed' };
    const reply = writeReply(verbose, style, random);
    expect(countWords(reply)).toBeGreaterThan(100);
    expect(generalRemarks.some((remark) => reply.includes(remark))).toBe(true);
    expect(classifyStyle(reply)).toEqual(style);
  });
});
