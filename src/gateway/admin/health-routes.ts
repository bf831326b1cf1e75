/**
 * `GET /healthz` and `GET /readyz`, unauthenticated, for load balancers and orchestrators.
 *
 * `/healthz`: can this gateway serve a completion now? 200 `{status:"ok", model}`, or 503
 * `{status:"unavailable", model, reason}` when the engine cannot (a remote engine that does not
 * answer, a local worker that died). `/readyz`: the same verdict with the state of each part:
 * `{status:"ready"|"unavailable", model, engine:{status, engine, reason?}, store:{status,
 * activePolicyVersion?, reason?}, training:{status:"on"|"paused"|"off", ...}}`, 503 unless the
 * engine and the store are ok. Probes come every few seconds from every balancer, so one answer is
 * kept for `cacheMs` and concurrent probes share one check: the engine sees at most one health
 * request per `cacheMs` whatever the probe rate.
 */
import type { Env, Hono } from 'hono';
import type { EngineHealth } from '../../spec/inference-engine.js';
import type { GatewayContext } from '../gateway-context.js';

/** How long one answer is reused, and how long a check may take before it counts as no answer. */
export const healthCacheMs = 2_000;
export const healthCheckTimeoutMs = 2_000;

type PartState = { status: 'ok' } | { status: 'unavailable'; reason: string };

interface Readiness {
  engine: EngineHealth;
  store: PartState & { activePolicyVersion?: number };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function checkReadiness(context: GatewayContext): Promise<Readiness> {
  const signal = AbortSignal.timeout(healthCheckTimeoutMs);
  const engine: Promise<EngineHealth> =
    context.engine.checkHealth === undefined
      ? Promise.resolve({ ok: true })
      : context.engine.checkHealth(signal).catch((error: unknown) => ({ ok: false, reason: messageOf(error) }));
  // The policy version table is small, and reading it is what serving a new version needs anyway.
  const store = context.store.listPolicyVersions().then(
    (versions): Readiness['store'] => {
      const active = versions.find((version) => version.active)?.version;
      return { status: 'ok', ...(active === undefined ? {} : { activePolicyVersion: active }) };
    },
    (error: unknown): Readiness['store'] => ({ status: 'unavailable', reason: messageOf(error) }),
  );
  return { engine: await engine, store: await store };
}

function createReadinessCache(context: GatewayContext): () => Promise<Readiness> {
  let cached: { at: number; readiness: Promise<Readiness> } | undefined;
  return () => {
    const now = context.now();
    if (cached === undefined || now - cached.at >= healthCacheMs) cached = { at: now, readiness: checkReadiness(context) };
    return cached.readiness;
  };
}

function trainingState(context: GatewayContext): Record<string, unknown> {
  const training = context.policies?.training ?? null;
  if (training === null) return { status: 'off' };
  const state = training.status();
  return { status: state.paused ? 'paused' : 'on', stepRunning: state.training, trainingVersion: state.trainingVersion, failedSteps: state.failedSteps };
}

export function registerHealthRoutes<E extends Env>(app: Hono<E>, context: GatewayContext): void {
  const readiness = createReadinessCache(context);
  const model = context.engine.modelId;

  app.get('/healthz', async (c) => {
    const { engine } = await readiness();
    if (engine.ok) return c.json({ status: 'ok', model });
    return c.json({ status: 'unavailable', model, reason: engine.reason }, 503);
  });

  app.get('/readyz', async (c) => {
    const { engine, store } = await readiness();
    const ready = engine.ok && store.status === 'ok';
    return c.json(
      {
        status: ready ? 'ready' : 'unavailable',
        model,
        engine: { status: engine.ok ? 'ok' : 'unavailable', engine: context.engine.engineId, ...(engine.ok ? {} : { reason: engine.reason }) },
        store,
        training: trainingState(context),
      },
      ready ? 200 : 503,
    );
  });
}
