import { describe, expect, it } from 'vitest';
import { cohortPosition, inSessionCohort } from './session-cohort.js';

describe('inSessionCohort', () => {
  const ids = Array.from({ length: 4_000 }, (_, index) => `session-${index}`);

  it('puts about the share of sessions in a cohort, the same ones every time', () => {
    const inside = ids.filter((id) => inSessionCohort('held-out', id, 0.1));
    expect(inside.length / ids.length).toBeGreaterThan(0.08);
    expect(inside.length / ids.length).toBeLessThan(0.12);
    expect(ids.filter((id) => inSessionCohort('held-out', id, 0.1))).toEqual(inside);
    expect(ids.filter((id) => inSessionCohort('held-out', id, 0))).toEqual([]);
    expect(ids.filter((id) => inSessionCohort('held-out', id, 1))).toHaveLength(ids.length);
  });

  it('draws the held-out slice and the canary cohort independently', () => {
    const heldOut = new Set(ids.filter((id) => inSessionCohort('held-out', id, 0.5)));
    const both = ids.filter((id) => heldOut.has(id) && inSessionCohort('canary', id, 0.5)).length;
    expect(both / ids.length).toBeGreaterThan(0.2);
    expect(both / ids.length).toBeLessThan(0.3);
    expect(cohortPosition('canary', 'a')).not.toBe(cohortPosition('held-out', 'a'));
  });
});
