import { describe, expect, it } from 'vitest';
import type { PolicyGateItem } from '../spec/policy-version-state.js';
import { decideReplayGate, defaultReplayGateRule, preferenceOf, signTestPValue } from './replay-gate-rule.js';

function items(wins: number, losses: number, ties: number): PolicyGateItem[] {
  const item = (index: number, candidate: number, incumbent: number): PolicyGateItem => ({
    turnId: `turn-${index}`, sessionId: `session-${index}`, candidate, incumbent, preferred: preferenceOf(candidate, incumbent),
  });
  return [
    ...Array.from({ length: wins }, (_, index) => item(index, 1, -1)),
    ...Array.from({ length: losses }, (_, index) => item(wins + index, -1, 1)),
    ...Array.from({ length: ties }, (_, index) => item(wins + losses + index, 0, 0)),
  ];
}

describe('signTestPValue', () => {
  it('is the upper binomial tail at one half', () => {
    expect(signTestPValue(3, 0)).toBeCloseTo(0.125, 12);
    expect(signTestPValue(8, 4)).toBeCloseTo(794 / 4096, 12);
    expect(signTestPValue(0, 5)).toBeCloseTo(1, 12);
    expect(signTestPValue(0, 0)).toBeNull();
    expect(signTestPValue(1_200, 1_000)).toBeLessThan(0.001);
  });
});

describe('decideReplayGate', () => {
  it('promotes a candidate that wins clearly, with the evidence', () => {
    const decision = decideReplayGate(items(9, 3, 4));
    expect(decision).toMatchObject({ decision: 'promote', turns: 16, wins: 9, losses: 3, ties: 4, candidateMeanScore: 6 / 16, incumbentMeanScore: -6 / 16 });
    expect(decision.pValue).toBeCloseTo(0.073, 3);
    expect(decision.rule).toContain('sign test');
  });

  it('keeps the incumbent on ties, on losses, on a lead below the margin or the test, and on too little evidence', () => {
    expect(decideReplayGate(items(0, 0, 20)).decision).toBe('reject');
    expect(decideReplayGate(items(2, 12, 2))).toMatchObject({ decision: 'reject', reason: expect.stringContaining('below the margin') });
    expect(decideReplayGate(items(5, 4, 21))).toMatchObject({ decision: 'reject', reason: expect.stringContaining('below the margin') });
    expect(decideReplayGate(items(6, 4, 0))).toMatchObject({ decision: 'reject', reason: expect.stringContaining('sign-test') });
    expect(decideReplayGate(items(5, 0, 0))).toMatchObject({ decision: 'reject', reason: expect.stringContaining('needs 8') });
    expect(decideReplayGate(items(5, 0, 0), { ...defaultReplayGateRule, minTurns: 5 }).decision).toBe('promote');
  });
});
