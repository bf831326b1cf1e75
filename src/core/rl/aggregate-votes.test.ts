import { describe, expect, it } from 'vitest';
import { aggregateVotes, integratedReward, meanVote, type ParsedVote } from './aggregate-votes.js';

const vote = (score: 1 | -1 | 0 | null): ParsedVote =>
  score === null ? { score: null, reason: 'unparseable' } : { score };

describe('aggregateVotes', () => {
  it('takes the majority, ties give 0, unparseable votes are dropped', () => {
    expect(aggregateVotes([vote(1), vote(1), vote(-1)])).toMatchObject({ score: 1, dropped: 0 });
    expect(aggregateVotes([vote(-1), vote(null), vote(-1)])).toMatchObject({ score: -1, dropped: 1 });
    expect(aggregateVotes([vote(1), vote(-1), vote(0)])).toMatchObject({ score: 0 });
    expect(aggregateVotes([vote(1), vote(-1)])).toMatchObject({ score: 0 });
    expect(aggregateVotes([vote(0), vote(0), vote(1)])).toMatchObject({
      score: 0,
      counts: { positive: 1, negative: 0, neutral: 2 },
    });
    expect(aggregateVotes([vote(1), vote(null), vote(null)])).toMatchObject({ score: 1, dropped: 2 });
  });

  it('returns no score as data when nothing is parseable', () => {
    expect(aggregateVotes([vote(null), vote(null)])).toEqual({ score: null, reason: 'no-valid-votes', dropped: 2 });
    expect(aggregateVotes([])).toEqual({ score: null, reason: 'no-valid-votes', dropped: 0 });
  });
});

describe('integratedReward', () => {
  it('adds the mean PRM vote to the outcome only with process rewards', () => {
    expect(integratedReward(1, [1, -1, 1], 'outcome+process')).toBeCloseTo(1 + 1 / 3);
    expect(integratedReward(1, [1, -1, 1], 'outcome')).toBe(1);
    expect(integratedReward(0, [], 'outcome+process')).toBe(0);
  });
});

describe('meanVote', () => {
  it('keeps what a majority throws away: 3 of 3 above 2 of 3', () => {
    expect(meanVote([1, 1, 1])).toBe(1);
    expect(meanVote([1, 1, -1])).toBeCloseTo(1 / 3);
    expect(meanVote([])).toBeNull();
  });
});
