/**
 * What the version-lifecycle tests read of `GET /admin/policies`, and the end of a canary that
 * regressed: the candidate rolled back by the watch within 50 canary turns, no request failed, and
 * the incumbent active.
 */
import { expect } from 'vitest';

export interface PolicyEntry {
  version: number;
  active: boolean;
  state: string;
  stateReason: string | null;
  gate: { decision: string; turns: number; heldOut: boolean; items: Array<{ sessionId: string }> } | null;
  canary: { decision: string; share: number; canary: { turns: number; feedback: number } } | null;
}

export function expectRolledBackCanary([base, candidate]: PolicyEntry[], run: { failed: number; canaryTurns: number }): void {
  expect(run.failed).toBe(0);
  expect(candidate).toMatchObject({ state: 'rolled-back', active: false, canary: { decision: 'roll-back' } });
  expect(candidate?.stateReason).toContain('rolled back by the canary watch');
  expect(run.canaryTurns).toBeLessThanOrEqual(50);
  expect(base).toMatchObject({ state: 'active', active: true });
}
