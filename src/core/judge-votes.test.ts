import { describe, expect, it } from 'vitest';
import { agreedHintIndexes, parseHintResponse, parseVote, selectHint } from './judge-votes.js';

describe('parseVote', () => {
  it('takes the last box', () => {
    expect(parseVote('First \\boxed{1}, on reflection \\boxed{-1}')).toEqual({ score: -1 });
    expect(parseVote('\\boxed{ +1 }')).toEqual({ score: 1 });
    expect(parseVote('unclear \\boxed{0}')).toEqual({ score: 0 });
    expect(parseVote('\\boxed{-0}')).toEqual({ score: 0 });
  });

  it('reports missing or out-of-range boxes as unparseable', () => {
    expect(parseVote('I think it is good.')).toEqual({ score: null, reason: 'unparseable' });
    expect(parseVote('\\boxed{1} then \\boxed{5}')).toEqual({ score: null, reason: 'unparseable' });
    expect(parseVote('\\boxed{yes}')).toEqual({ score: null, reason: 'unparseable' });
  });
});

describe('parseHintResponse', () => {
  it('accepts a positive box with a marked hint', () => {
    expect(parseHintResponse('The user wants plain text. \\boxed{1}\n[HINT_START] Avoid bold text. [HINT_END]')).toEqual({
      accepted: true,
      hint: 'Avoid bold text.',
      reason: 'accepted',
    });
  });

  it('reads the vote outside the hint and the last hint block', () => {
    const text = '\\boxed{1} [HINT_START]draft hint text[HINT_END] [HINT_START]Put the answer in \\boxed{12} form.[HINT_END]';
    expect(parseHintResponse(text)).toEqual({ accepted: true, hint: 'Put the answer in \\boxed{12} form.', reason: 'accepted' });
  });

  it('rejects negative boxes, missing votes, missing markers and bad lengths', () => {
    expect(parseHintResponse('No correction. \\boxed{-1}')).toMatchObject({ accepted: false, reason: 'negative-vote' });
    expect(parseHintResponse('\\boxed{-1} [HINT_START]a long enough hint[HINT_END]')).toMatchObject({
      accepted: false,
      reason: 'negative-vote',
    });
    expect(parseHintResponse('[HINT_START]a long enough hint[HINT_END]')).toMatchObject({ reason: 'unparseable-vote' });
    expect(parseHintResponse('\\boxed{0} [HINT_START]a long enough hint[HINT_END]')).toMatchObject({
      reason: 'unparseable-vote',
    });
    expect(parseHintResponse('\\boxed{1} Avoid bold text.')).toMatchObject({ reason: 'missing-hint', hint: null });
    expect(parseHintResponse('\\boxed{1} [HINT_START]Be brief[HINT_END]')).toMatchObject({ reason: 'hint-too-short' });
    expect(parseHintResponse(`\\boxed{1} [HINT_START]${'x'.repeat(601)}[HINT_END]`)).toMatchObject({
      reason: 'hint-too-long',
    });
  });
});

describe('selectHint', () => {
  it('uses overlap scores when they line up, ties to the longer hint', () => {
    expect(selectHint(['a long hint here', 'short one', 'mid hint'], [3, 9, 1])).toEqual({
      hint: 'short one',
      index: 1,
      method: 'overlap',
    });
    expect(selectHint(['aaaa', 'bbbbbb', 'cc'], [5, 5, 1])?.index).toBe(1);
  });

  it('falls back to the longest hint, earlier on ties, and null for no candidates', () => {
    expect(selectHint(['short', 'the longest one', 'medium one'])).toEqual({
      hint: 'the longest one',
      index: 1,
      method: 'longest',
    });
    expect(selectHint(['same', 'four'])?.index).toBe(0);
    expect(selectHint(['a', 'bbb'], [1])?.method).toBe('longest');
    expect(selectHint(['a', 'bbb'], [Number.NaN, 1])?.method).toBe('longest');
    expect(selectHint([])).toBeNull();
  });

  it('prefers the hint most votes gave word for word over a longer lone one', () => {
    const agreed = 'Write at least 100 words.';
    expect(selectHint(['Please be brief, under 40 words and no lists.', agreed, agreed])).toEqual({ hint: agreed, index: 1, method: 'longest' });
    expect(selectHint(['short', agreed, agreed], [9, 1, 1])?.hint).toBe(agreed);
    expect(agreedHintIndexes(['a', 'b', 'c'])).toEqual([0, 1, 2]);
    expect(agreedHintIndexes(['a', 'b', 'a', 'b', 'c'])).toEqual([0, 1, 2, 3]);
    expect(agreedHintIndexes([])).toEqual([]);
  });
});
