import { expect } from 'vitest';
import type { PolicyEntry } from './expect-rolled-back-canary.js';

/**
 * A user's request answered while the replay gate evaluates version 1: the incumbent (0) served it
 * unless the candidate was active by then. Returns whether the candidate served it.
 */
export function expectIncumbentBeforePromotion(version: string | null, candidate: Pick<PolicyEntry, 'state'> | undefined): boolean {
  if (version !== '1') {
    expect(version).toBe('0');
    return false;
  }
  expect(candidate?.state, 'a user was served the candidate before it was active').toBe('active');
  return true;
}
