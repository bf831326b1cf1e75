import { describe, expect, it } from 'vitest';
import { consecutiveCriterion, servedProbeRate, sessionsToSuccess } from './success-criteria.js';

const probe = (afterSession: number, satisfactionRate: number) => ({ afterSession, satisfactionRate });
const sessions = (flags: string) => [...flags].map((flag, index) => ({ index: index + 1, firstResponseSatisfied: flag === '1' }));

describe('sessionsToSuccess', () => {
  it('is the first probe of the trailing run at or above the threshold', () => {
    expect(sessionsToSuccess([probe(0, 0.3), probe(4, 0.6), probe(8, 0.82), probe(12, 0.9)])).toBe(8);
  });

  it('ignores an early success that does not last', () => {
    expect(sessionsToSuccess([probe(0, 0.3), probe(4, 0.9), probe(8, 0.5), probe(12, 0.8), probe(16, 0.85)])).toBe(12);
  });

  it('is null when the last probe is below the threshold, or there is no probe', () => {
    expect(sessionsToSuccess([probe(0, 0.3), probe(4, 0.9), probe(8, 0.79)])).toBeNull();
    expect(sessionsToSuccess([])).toBeNull();
  });

  it('is 0 when the base model already satisfies the user and stays so', () => {
    expect(sessionsToSuccess([probe(0, 0.85), probe(5, 0.8)])).toBe(0);
  });

  it('orders probes by session and honours a custom threshold', () => {
    expect(sessionsToSuccess([probe(8, 0.6), probe(0, 0.1), probe(4, 0.7)], 0.6)).toBe(4);
  });
});

describe('consecutiveCriterion', () => {
  it('is the session that completes the first run of three satisfied first responses', () => {
    expect(consecutiveCriterion(sessions('0110111011'))).toBe(7);
  });

  it('is null without such a run and honours another run length', () => {
    expect(consecutiveCriterion(sessions('1101101'))).toBeNull();
    expect(consecutiveCriterion(sessions('1101101'), 2)).toBe(2);
  });
});

describe('servedProbeRate', () => {
  it('holds each probe until the next one', () => {
    const probes = [probe(0, 0.2), probe(3, 0.5), probe(7, 0.9)];
    expect([0, 2, 3, 6, 7, 10].map((session) => servedProbeRate(probes, session))).toEqual([0.2, 0.2, 0.5, 0.5, 0.9, 0.9]);
    expect(servedProbeRate([probe(2, 0.4)], 1)).toBeNull();
  });
});
