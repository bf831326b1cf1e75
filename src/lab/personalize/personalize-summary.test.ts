import { describe, expect, it } from 'vitest';
import type { PersonalizeResult } from './personalize-result.js';
import { medianSessions, personalizeSummaryTable } from './personalize-summary.js';

function run(user: string, method: PersonalizeResult['method'], seed: number, sessionsToSuccess: number | null, lastRate: number): PersonalizeResult {
  return {
    user, method, seed, sessionsToSuccess,
    consecutiveCriterion: sessionsToSuccess === null ? null : sessionsToSuccess + 1,
    baseProbeRate: 0.4, successThreshold: 0.8, probeSize: 50, model: 'builtin:tiny', judge: null, serverMethod: method,
    sessions: Array.from({ length: 20 }, (_, index) => ({
      index: index + 1, firstResponseSatisfied: false, policyVersion: 0, sessionId: `s${index}`, turnIds: [], responsesSatisfied: 0,
    })),
    probe: [
      { policyVersion: 0, afterSession: 0, satisfactionRate: 0.4, satisfied: 20, size: 50, mixedVersions: false },
      { policyVersion: 1, afterSession: 4, satisfactionRate: lastRate, satisfied: Math.round(lastRate * 50), size: 50, mixedVersions: false },
    ],
  };
}

describe('medianSessions', () => {
  it('ranks runs that never succeeded last', () => {
    expect(medianSessions([12, null, 8])).toBe(12);
    expect(medianSessions([null, null, 8])).toBeNull();
    expect(medianSessions([10, 6])).toBe(8);
    expect(medianSessions([10, null])).toBeNull();
    expect(medianSessions([])).toBeNull();
  });
});

describe('personalizeSummaryTable', () => {
  it('has one row per user and method, users and methods in a fixed order, seeds in order', () => {
    const table = personalizeSummaryTable([
      run('teacher', 'combine', 1, 5, 0.9),
      run('student', 'rl', 1, null, 0.5),
      run('student', 'combine', 2, 9, 0.86),
      run('student', 'combine', 1, 11, 0.82),
      run('student', 'combine', 3, null, 0.7),
    ]);
    const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| user') && !line.startsWith('| ---'));
    expect(rows).toEqual([
      '| student | combine | 1, 2, 3 | 11, 9, — (20) | 11 | 12, 10, — (20) | 0.40 | 0.82, 0.86, 0.70 |',
      '| student | rl | 1 | — (20) | not reached | — (20) | 0.40 | 0.50 |',
      '| teacher | combine | 1 | 5 | 5 | 6 | 0.40 | 0.90 |',
    ]);
    expect(table).toContain('at least 0.8');
    expect(table).not.toContain('stopped waiting');
  });

  it('marks a run that stopped waiting for the server, and says what the mark means', () => {
    const impatient = { ...run('ta', 'combine', 2, 6, 0.84), stoppedWaiting: { afterSession: 9, reason: 'timed-out' as const } };
    const table = personalizeSummaryTable([run('ta', 'combine', 1, 7, 0.9), impatient]);
    expect(table).toContain('| ta | combine | 1, 2 | 7, 6 * | 6.5 |');
    expect(table).toMatch(/\*: the run stopped waiting for the server/);
  });
});
