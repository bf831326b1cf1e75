import { describe, expect, it } from 'vitest';
import { checkPolicyScope } from './check-policy-scope.js';

describe('checkPolicyScope', () => {
  it('refuses a gate or a canary with per-user policies, and lets everything else through', () => {
    expect(() => checkPolicyScope({ policyScope: 'user', gate: 'replay', canaryShare: 0, onDelete: 'mark' })).toThrow('drop --gate replay');
    expect(() => checkPolicyScope({ policyScope: 'user', gate: 'none', canaryShare: 0.1, onDelete: 'mark' })).toThrow('drop --canary-share');
    expect(() => checkPolicyScope({ policyScope: 'user', gate: 'none', canaryShare: 0, onDelete: 'mark' })).not.toThrow();
    expect(() => checkPolicyScope({ policyScope: 'global', gate: 'replay', canaryShare: 0.1, onDelete: 'retire' })).not.toThrow();
    expect(() => checkPolicyScope({ policyScope: 'user', gate: 'none', canaryShare: 0, onDelete: 'retrain' })).toThrow('--on-delete mark');
  });
});
