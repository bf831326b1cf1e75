/**
 * Admin routes of policy versions and training: `GET /admin/policies` (`{data:[{version,
 * createdAt, parent, active, ...}]}`, the base first), `POST /admin/policies/{version}/activate`
 * (roll serving back or forward), `POST /admin/training/pause | resume | step` (`step` runs one
 * training step now). The gateway knows nothing of the trainer: the composition root hands it a
 * `PolicyControl`.
 */
import type { Env, Hono } from 'hono';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { PolicyVersion } from '../spec/inference-engine.js';
import type { PolicyServingStatus } from '../spec/policy-serving-status.js';
import type { PolicyVersionRecord, TrainingStepRecord } from '../spec/records.js';
import type { GatewayContext } from './gateway-context.js';

/** What the admin routes may do to serving and training. */
export interface PolicyControl {
  /** Serves `version` from now on (and training continues from it); `not_found` for an unknown one. */
  activate(version: PolicyVersion): Promise<void>;
  /** Null when training is off (`--no-train`, or an engine that cannot load versions). */
  readonly training: TrainingControl | null;
  /** Which version each engine of this process serves (the gateway's, and the judge's own), and what is pending. */
  servingStatus?(): PolicyServingStatus[];
}

export interface TrainingControl {
  pause(): void;
  resume(): void;
  trainNow(): Promise<
    | { kind: 'trained'; step: TrainingStepRecord; samplesDropped: number }
    | { kind: 'all-stale'; samplesDropped: number }
    | { kind: 'no-signal'; samplesDropped: number }
    | { kind: 'idle' }
  >;
  status(): { paused: boolean; training: boolean; trainingVersion: PolicyVersion; samplesDroppedStale: number; failedSteps: number; trainEvery: number };
}

export function wirePolicyVersion(record: PolicyVersionRecord): Record<string, unknown> {
  return {
    version: record.version,
    createdAt: record.createdAt,
    parent: record.parent,
    active: record.active,
    kind: record.kind,
    step: record.step,
    samples: record.samples,
    bytes: record.bytes,
    metrics: record.metrics,
  };
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
  app.get('/admin/policies', async (c) => c.json({ object: 'list', data: (await context.store.listPolicyVersions()).map(wirePolicyVersion) }));

  app.post('/admin/policies/:version/activate', async (c) => {
    const text = c.req.param('version');
    const version = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(version)) throw new ClawrlError('invalid_request', `A policy version is a non-negative integer, got '${text}'.`, { param: 'version' });
    await requireControl(context).activate(version);
    const active = (await context.store.listPolicyVersions()).find((record) => record.version === version);
    return c.json(active === undefined ? { version, active: true } : wirePolicyVersion(active));
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
