/** `clawrl policy list | activate <version>`: policy versions of a running server; roll serving back or forward. */
import { ClawrlError } from '../../spec/clawrl-error.js';
import { callServerAdmin } from './call-server-admin.js';

// Activating a version may load its weights first.
const policyCallTimeoutMs = 60_000;

export interface PolicyListEntry {
  version: number;
  createdAt: number;
  parent: number | null;
  active: boolean;
  kind: string;
  step: number | null;
  samples: number;
  metrics: { loss: number } | null;
}

export async function listPolicies(url: string, adminKey: string | undefined): Promise<PolicyListEntry[]> {
  return (await callServerAdmin({ url, adminKey, route: '/admin/policies', method: 'GET', timeoutMs: policyCallTimeoutMs })).data as PolicyListEntry[];
}

export async function activatePolicy(url: string, adminKey: string | undefined, version: string): Promise<Record<string, unknown>> {
  if (!/^\d+$/.test(version)) throw new ClawrlError('configuration_error', `A policy version is a non-negative integer, got '${version}'.`);
  return callServerAdmin({ url, adminKey, route: `/admin/policies/${version}/activate`, method: 'POST', timeoutMs: policyCallTimeoutMs });
}

export function formatPolicies(policies: PolicyListEntry[]): string {
  const lines = ['   version  parent  kind     step  samples  loss       created'];
  for (const policy of policies) {
    lines.push(
      [
        policy.active ? ' * ' : '   ',
        String(policy.version).padEnd(9),
        String(policy.parent ?? '-').padEnd(8),
        policy.kind.padEnd(9),
        String(policy.step ?? '-').padEnd(6),
        String(policy.samples).padEnd(9),
        (policy.metrics === null ? '-' : policy.metrics.loss.toFixed(4)).padEnd(11),
        new Date(policy.createdAt).toISOString(),
      ].join(''),
    );
  }
  return lines.join('\n');
}
