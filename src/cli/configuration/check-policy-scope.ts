/**
 * `--policy-scope user` without what it does not do: the replay gate and the canary compare one
 * candidate with one incumbent for everyone, and each user's lineage has its own, so with per-user
 * policies a user's version serves that user at once; and an erasure's `--on-delete retire | retrain`,
 * whose fallback may leave a user's lineage. Refused before anything opens, in one line.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';

/** `gate` and `canaryShare` are absent for a command without them (`clawrl gateway`), `onDelete` for one that erases nothing (`clawrl trainer`). */
export function checkPolicyScope(configuration: { policyScope: 'global' | 'user'; gate?: 'replay' | 'none'; canaryShare?: number; onDelete?: string }): void {
  if (configuration.policyScope !== 'user') return;
  // Retiring moves serving back within one lineage; a user's lineage cannot yet fall back to the base.
  if (configuration.onDelete !== undefined && configuration.onDelete !== 'mark') {
    throw new ClawrlError('configuration_error', `--policy-scope user cannot yet retire a user's versions an erasure tainted: use --on-delete mark (the default), or --policy-scope global.`, { param: 'onDelete' });
  }
  if (configuration.gate === 'replay' || (configuration.canaryShare ?? 0) > 0) {
    throw new ClawrlError(
      'configuration_error',
      `--policy-scope user has no gate or canary (each user's version serves that user at once): drop ${configuration.gate === 'replay' ? '--gate replay' : '--canary-share'} or use --policy-scope global.`,
      { param: 'policyScope' },
    );
  }
}
