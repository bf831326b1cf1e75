import { describe, expect, it } from 'vitest';
import { cohortSignalOf, decideCanary, defaultCanaryWatchRule } from './canary-watch-rule.js';

const turns = (count: number, reward: number | null, feedback: number | null = null) => Array.from({ length: count }, () => ({ reward, feedback }));

describe('decideCanary', () => {
  const incumbent = cohortSignalOf([...turns(10, 0.5), ...turns(20, null)]);

  it("rolls back when the canary's reward falls beyond the margin below the incumbent's in the same period", () => {
    const decision = decideCanary(cohortSignalOf(turns(6, -0.5)), incumbent, null);
    expect(decision.decision).toBe('roll-back');
    expect(decision.reason).toContain('the same period');
  });

  it('rolls back on explicit feedback alone, against the earlier service or neutral when the period is quiet', () => {
    const canary = cohortSignalOf([...turns(5, 0.6, -1), ...turns(5, 0.6)]);
    const quiet = cohortSignalOf(turns(2, 0.6, 1));
    expect(decideCanary(canary, quiet, cohortSignalOf(turns(40, 0.6, 0.2))).reason).toContain('explicit feedback');
    expect(decideCanary(canary, quiet, cohortSignalOf(turns(40, 0.6, 0.2))).reason).toContain('earlier service');
    expect(decideCanary(canary, quiet, null)).toMatchObject({ decision: 'roll-back', reason: expect.stringContaining('neutral') });
  });

  it('keeps watching on too few scored turns or a drop within the margin, and promotes after the length', () => {
    expect(decideCanary(cohortSignalOf(turns(4, -1)), incumbent, null).decision).toBe('watching');
    expect(decideCanary(cohortSignalOf(turns(20, 0.3)), incumbent, null).decision).toBe('watching');
    expect(decideCanary(cohortSignalOf(turns(defaultCanaryWatchRule.lengthTurns, 0.3)), incumbent, null).decision).toBe('promote');
    expect(decideCanary(cohortSignalOf(turns(defaultCanaryWatchRule.lengthTurns, null)), incumbent, null).decision).toBe('promote');
  });
});
