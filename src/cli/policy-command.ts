/** `clawrl policy list | activate <version>`: policy versions of a running server; roll serving back or forward. */
import { ClawrlError } from '../spec/clawrl-error.js';

async function adminCall(url: string, adminKey: string | undefined, route: string, method: 'GET' | 'POST'): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(new URL(route, url), {
      method,
      headers: adminKey === undefined ? {} : { authorization: `Bearer ${adminKey}` },
      signal: AbortSignal.timeout(60_000),
    });
  } catch (error) {
    throw new ClawrlError('upstream_error', `Cannot reach clawrl at ${url}: ${(error as Error).message}. Is it running (clawrl serve)?`, { cause: error });
  }
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (!response.ok || body === null) {
    const message = (body?.error as { message?: string } | undefined)?.message ?? `HTTP ${response.status}`;
    throw new ClawrlError(response.status === 404 ? 'not_found' : 'upstream_error', `clawrl at ${url} answered: ${message}`);
  }
  return body;
}

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
  return (await adminCall(url, adminKey, '/admin/policies', 'GET')).data as PolicyListEntry[];
}

export async function activatePolicy(url: string, adminKey: string | undefined, version: string): Promise<Record<string, unknown>> {
  if (!/^\d+$/.test(version)) throw new ClawrlError('configuration_error', `A policy version is a non-negative integer, got '${version}'.`);
  return adminCall(url, adminKey, `/admin/policies/${version}/activate`, 'POST');
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
