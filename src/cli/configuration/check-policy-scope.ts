/**
 * `--policy-scope user` without what it does not do: the replay gate and the canary compare one
 * candidate with one incumbent for everyone, and each user's lineage has its own, so with per-user
 * policies a user's version serves that user at once. Refused before anything opens, in one line.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';

export function checkPolicyScope(configuration: { policyScope: 'global' | 'user'; gate: 'replay' | 'none'; canaryShare: number }): void {
  if (configuration.policyScope !== 'user') return;
  if (configuration.gate === 'replay' || configuration.canaryShare > 0) {
    throw new ClawrlError(
      'configuration_error',
      `--policy-scope user has no gate or canary (each user's version serves that user at once): drop ${configuration.gate === 'replay' ? '--gate replay' : '--canary-share'} or use --policy-scope global.`,
      { param: 'policyScope' },
    );
  }
}
