/**
 * What a request asks of clawrl beside its generation, read from its headers with the API key's
 * defaults: `X-Clawrl-Policy-Version: <n>` pins the version that serves it; `X-Clawrl-Train: off`
 * records the turn but never trains on it; `X-Clawrl-Record: off` serves it without recording
 * anything. A header always wins over the key's default (`--key-consent`), either way. The same
 * headers on every protocol, answered in the protocol's own error shape when they are malformed.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import type { PolicyVersion } from '../spec/inference-engine.js';
import type { PolicyVersionRecord } from '../spec/records.js';

export const policyVersionHeader = 'x-clawrl-policy-version';
export const trainHeader = 'x-clawrl-train';
export const recordHeader = 'x-clawrl-record';

/** What an API key's requests do when their headers say nothing (`--key-consent tenant=train-off`). */
export interface ConsentDefaults {
  train: boolean;
  record: boolean;
}

export const fullConsent: ConsentDefaults = { train: true, record: true };

export interface RequestControls {
  /** The version `X-Clawrl-Policy-Version` pins; null when the request pins none. */
  pinnedVersion: PolicyVersion | null;
  /** False: the turn is recorded and never trained on. */
  train: boolean;
  /** False: the turn is served and nothing of it is recorded (no turn, no session, nothing on the bus). */
  record: boolean;
}

const switchValues = new Map([
  ['on', true],
  ['true', true],
  ['1', true],
  ['yes', true],
  ['off', false],
  ['false', false],
  ['0', false],
  ['no', false],
]);

function switchOf(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  const parsed = switchValues.get(value.trim().toLowerCase());
  if (parsed === undefined) {
    throw new ClawrlError('invalid_request', `${displayName(name)} must be "on" or "off", not '${value}'.`, { param: displayName(name) });
  }
  return parsed;
}

function displayName(header: string): string {
  return header.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
}

function pinnedVersionOf(value: string | undefined): PolicyVersion | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  const version = /^\d{1,15}$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isSafeInteger(version)) {
    throw new ClawrlError('invalid_request', `X-Clawrl-Policy-Version must be a policy version number (0, 1, 2, ...), not '${value}'.`, {
      param: 'X-Clawrl-Policy-Version',
    });
  }
  return version;
}

/** The request's controls; a malformed header is an `invalid_request` naming it. */
export function requestControlsOf(header: (name: string) => string | undefined, defaults: ConsentDefaults): RequestControls {
  return {
    pinnedVersion: pinnedVersionOf(header(policyVersionHeader)),
    train: switchOf(trainHeader, header(trainHeader), defaults.train),
    record: switchOf(recordHeader, header(recordHeader), defaults.record),
  };
}


/**
 * Refuses a pin of a version the store does not know, that is retired, or that has not passed the
 * gate (a candidate, a rejected version), naming it (400). The
 * base model, version 0, is always known: every engine serves it, even before it is recorded.
 */
export function checkPinnedVersion(version: PolicyVersion, versions: readonly PolicyVersionRecord[]): void {
  const record = versions.find((candidate) => candidate.version === version);
  if (record === undefined && version === 0) return;
  if (record === undefined) {
    throw new ClawrlError('invalid_request', `Policy version ${version} is unknown (X-Clawrl-Policy-Version); GET /admin/policies lists the versions.`, {
      param: 'X-Clawrl-Policy-Version',
    });
  }
  // A retired version (the version lifecycle's `state`) serves no request, pinned or not.
  if (record.state === 'retired') {
    throw new ClawrlError('invalid_request', `Policy version ${version} is retired and serves no request (X-Clawrl-Policy-Version).`, {
      param: 'X-Clawrl-Policy-Version',
    });
  }
  // A candidate is judged by the gate before any user meets it, and a rejected one never earned
  // users: a client's pin must not route around the gate (`clawrl eval replay` is how a person tries one).
  if (record.state === 'candidate' || record.state === 'rejected') {
    throw new ClawrlError('invalid_request', `Policy version ${version} is ${record.state === 'candidate' ? 'a candidate still before the gate' : 'rejected by the gate'} and serves no user (X-Clawrl-Policy-Version).`, {
      param: 'X-Clawrl-Policy-Version',
    });
  }
}

/**
 * `--key-consent` values: `tenant=train-off` (recorded, never trained on) or `tenant=record-off`
 * (served, never recorded). Repeating a tenant adds to what it turns off.
 */
export function parseKeyConsent(values: readonly string[]): Map<string, ConsentDefaults> {
  const byTenant = new Map<string, ConsentDefaults>();
  for (const value of values) {
    const match = /^(.+)=(train-off|record-off)$/.exec(value.trim());
    if (match === null) {
      throw new ClawrlError('configuration_error', `--key-consent takes "tenant=train-off" or "tenant=record-off", not '${value}'.`);
    }
    const [, tenant = '', setting] = match;
    const current = byTenant.get(tenant) ?? fullConsent;
    byTenant.set(tenant, setting === 'train-off' ? { ...current, train: false } : { ...current, record: false });
  }
  return byTenant;
}
