/**
 * What both record stores decide when a policy version's state changes, so SQLite and Postgres
 * keep the same lifecycle (`spec/policy-version-state.ts`): the state a replaced active version
 * takes, and the checks a state change passes.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import type { PolicyVersion } from '../spec/inference-engine.js';
import { policyVersionStates, type PolicyVersionState } from '../spec/policy-version-state.js';

/** The default reason of an activation that names none. */
export const defaultActivationReason = 'activated';

/**
 * The state of the version an activation replaces: a newer version supersedes it (`retired`); an
 * older one means serving went back past it (`rolled-back`).
 */
export function replacedVersionState(replaced: PolicyVersion, activated: PolicyVersion): { state: PolicyVersionState; reason: string } {
  return activated > replaced
    ? { state: 'retired', reason: `superseded by version ${activated}` }
    : { state: 'rolled-back', reason: `rolled back to version ${activated}` };
}

/** Throws `invalid_request` for a state outside the lifecycle or one that would leave serving without a version. */
export function checkStateChange(version: PolicyVersion, state: PolicyVersionState, activeVersion: PolicyVersion | null): void {
  if (!policyVersionStates.includes(state)) {
    throw new ClawrlError('invalid_request', `Unknown policy version state '${String(state)}'; one of ${policyVersionStates.join(', ')}.`, { param: 'state' });
  }
  if (state !== 'active' && version === activeVersion) {
    throw new ClawrlError(
      'invalid_request',
      `Policy version ${version} is active; activate another version before making it ${state}.`,
      { param: 'version' },
    );
  }
}

/**
 * Part of SQLite migration 10 and Postgres migration 9 (the same SQL in both dialects): the state
 * of each version recorded before states were, from its activations. Shipped: never edit it.
 */
export const policyStateBackfillSql = `
  UPDATE policy_versions SET
    state = CASE
      WHEN version = (SELECT version FROM policy_activations ORDER BY id DESC LIMIT 1) THEN 'active'
      WHEN version > (SELECT version FROM policy_activations ORDER BY id DESC LIMIT 1) THEN 'rolled-back'
      ELSE 'retired' END,
    state_reason = CASE
      WHEN version = (SELECT version FROM policy_activations ORDER BY id DESC LIMIT 1) THEN 'active before states were recorded'
      WHEN version > (SELECT version FROM policy_activations ORDER BY id DESC LIMIT 1) THEN 'rolled back before states were recorded'
      ELSE 'superseded before states were recorded' END;
`;
