/**
 * Admin routes of policy versions and training: `GET /admin/policies` (`{data:[{version,
 * createdAt, parent, user, active, state, stateReason, gate, canary, ...}]}`, the base first; `?user=`
 * one user's lineage, each lineage with its own active version),
 * `POST /admin/policies/{version}/activate` (a person's override: roll serving back or forward,
 * recorded with the reason "activated by a person"), `POST /admin/training/pause | resume | step` (`step` runs one
 * training step now). The gateway knows nothing of the trainer: the composition root hands it a
 * `PolicyControl` (`gateway-context.ts`).
 */
import type { Env, Hono } from 'hono';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyVersionRecord } from '../../spec/records.js';
import type { GatewayContext } from '../gateway-context.js';
import type { PolicyControl, TrainingControl } from '../policy-control.js';

/** The reason recorded when a person activates a version through the admin API (the CLI and the dashboard use it). */
export const personActivationReason = 'activated by a person';

export function wirePolicyVersion(record: PolicyVersionRecord): Record<string, unknown> {
  return {
    version: record.version,
    createdAt: record.createdAt,
    parent: record.parent,
    user: record.user,
    active: record.active,
    kind: record.kind,
    step: record.step,
    samples: record.samples,
    bytes: record.bytes,
    metrics: record.metrics,
    state: record.state,
    stateReason: record.stateReason,
    stateChangedAt: record.stateChangedAt,
    gate: record.gate,
    canary: record.canary,
  };
}

/** A non-negative integer path or query parameter. */
function versionParameter(text: string, param: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value)) throw new ClawrlError('invalid_request', `${param} is a non-negative integer, got '${text}'.`, { param });
  return value;
}

function requireControl(context: GatewayContext): PolicyControl {
  if (context.policies === undefined) throw new ClawrlError('unsupported', 'This server does not manage policy versions.');
  return context.policies;
}

function requireTraining(context: GatewayContext): TrainingControl {
  const training = requireControl(context).training;
  if (training === null) throw new ClawrlError('unsupported', 'Training is off on this server (--no-train, or an engine that cannot load policy versions).');
  return training;
}

export function registerPolicyRoutes<Environment extends Env>(app: Hono<Environment>, context: GatewayContext): void {
  // `?user=tenant/name` lists that user's lineage (`--policy-scope user`); `?user=` (empty) the global lineage's.
  app.get('/admin/policies', async (c) => {
    const user = c.req.query('user');
    const versions = await context.store.listPolicyVersions(user === undefined ? {} : { user: user === '' ? null : user });
    return c.json({ object: 'list', data: versions.map(wirePolicyVersion) });
  });

  app.post('/admin/policies/:version/activate', async (c) => {
    const version = versionParameter(c.req.param('version'), 'version');
    // A version retired after an erasure (`--on-delete retire | retrain`) learnt from erased data: it is never served again.
    const retired = (await context.eraser?.taintedVersions())?.some((tainted) => tainted.version === version && tainted.retiredAt !== null) ?? false;
    if (retired) throw new ClawrlError('invalid_request', `Version ${version} was retired: its lineage holds erased samples (GET /admin/tainted-versions).`, { param: 'version' });
    await requireControl(context).activate(version, personActivationReason);
    const active = (await context.store.listPolicyVersions()).find((record) => record.version === version);
    return c.json(active === undefined ? { version, active: true } : wirePolicyVersion(active));
  });

  // The replay gate by hand: the same evaluation, no state changed (`clawrl eval replay`).
  app.post('/admin/policies/:version/replay', async (c) => {
    const control = requireControl(context);
    if (control.replay === undefined) throw new ClawrlError('unsupported', 'This server cannot replay versions (its engine cannot serve a version beside the active one).');
    const version = versionParameter(c.req.param('version'), 'version');
    const against = c.req.query('against');
    const sessions = c.req.query('sessions');
    const evidence = await control.replay(version, {
      ...(against === undefined ? {} : { against: versionParameter(against, 'against') }),
      ...(sessions === undefined ? {} : { sessions: Math.max(1, versionParameter(sessions, 'sessions')) }),
    });
    return c.json(evidence);
  });

  app.post('/admin/training/pause', (c) => {
    const training = requireTraining(context);
    training.pause();
    return c.json(training.status());
  });

  app.post('/admin/training/resume', (c) => {
    const training = requireTraining(context);
    training.resume();
    return c.json(training.status());
  });

  app.post('/admin/training/step', async (c) => c.json(await requireTraining(context).trainNow()));
}
