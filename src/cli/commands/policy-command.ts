/**
 * `clawrl policy list [--user <user>] | activate <version>`: policy versions of a running server with their lifecycle
 * state, owner, the gate's decision and why; roll serving back or forward (a person's override, recorded as "activated by
 * a person") in whichever lineage the version belongs to.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import { callServerAdmin } from './call-server-admin.js';

// Activating a version may load its weights first.
const policyCallTimeoutMs = 60_000;

export interface PolicyListEntry {
  version: number;
  createdAt: number;
  parent: number | null;
  /** The lineage's owner; null for the global lineage. */
  user: string | null;
  active: boolean;
  kind: string;
  step: number | null;
  samples: number;
  metrics: { loss: number } | null;
  state: string;
  stateReason: string | null;
  gate: { decision: string; wins: number; losses: number; ties: number; pValue: number | null } | null;
}

/** The gate's evidence in a few words: its decision and the paired counts. */
function gateSummary(gate: PolicyListEntry['gate']): string {
  if (gate === null) return '-';
  return `${gate.decision} ${gate.wins}/${gate.losses}/${gate.ties}${gate.pValue === null ? '' : ` p=${gate.pValue.toFixed(3)}`}`;
}

/** Every version, or with `user` one user's lineage (an empty `user`: the global lineage). */
export async function listPolicies(url: string, adminKey: string | undefined, user?: string): Promise<PolicyListEntry[]> {
  const route = user === undefined ? '/admin/policies' : `/admin/policies?user=${encodeURIComponent(user)}`;
  return (await callServerAdmin({ url, adminKey, route, method: 'GET', timeoutMs: policyCallTimeoutMs })).data as PolicyListEntry[];
}

export async function activatePolicy(url: string, adminKey: string | undefined, version: string): Promise<Record<string, unknown>> {
  if (!/^\d+$/.test(version)) throw new ClawrlError('configuration_error', `A policy version is a non-negative integer, got '${version}'.`);
  return callServerAdmin({ url, adminKey, route: `/admin/policies/${version}/activate`, method: 'POST', timeoutMs: policyCallTimeoutMs });
}

export function formatPolicies(policies: PolicyListEntry[]): string {
  const lines = ['   version  state        parent  user             kind     step  samples  loss       created                   gate (w/l/t)          reason'];
  for (const policy of policies) {
    lines.push(
      [
        policy.active ? ' * ' : '   ',
        String(policy.version).padEnd(9),
        policy.state.padEnd(13),
        String(policy.parent ?? '-').padEnd(8),
        // Servers from before users owned versions send none: the global lineage.
        (policy.user ?? '-').padEnd(17),
        policy.kind.padEnd(9),
        String(policy.step ?? '-').padEnd(6),
        String(policy.samples).padEnd(9),
        (policy.metrics === null ? '-' : policy.metrics.loss.toFixed(4)).padEnd(11),
        new Date(policy.createdAt).toISOString().padEnd(26),
        gateSummary(policy.gate).padEnd(22),
        policy.stateReason ?? '',
      ].join('').trimEnd(),
    );
  }
  return lines.join('\n');
}
