/**
 * The gateway's Hono app: models, feedback, health, metrics and admin routes over the seams in
 * `GatewayContext`. The protocol routes (chat completions, Responses, Messages) are served before
 * it, on `node:http` directly (`create-gateway-request-listener.ts`). It knows nothing of judging or training.
 */
import { Hono, type Context } from 'hono';
import { ClawrlError } from '../spec/clawrl-error.js';
import { registerAdminRoutes } from './admin/admin-routes.js';
import type { GatewayVariables } from './api-key-authenticator.js';
import { asClawrlError, errorResponse } from './error-response.js';
import { registerDashboardRoutes } from './admin/dashboard-routes.js';
import { registerErasureRoutes } from './admin/erasure-routes.js';
import { registerFeedbackRoute } from './admin/feedback-route.js';
import { registerHealthRoutes } from './admin/health-routes.js';
import type { GatewayContext } from './gateway-context.js';
import { registerPolicyRoutes } from './admin/policy-routes.js';
import { registerUserMemoryRoutes, tenantUserMemoryRoute } from './admin/user-memory-routes.js';

type Variables = GatewayVariables;

/**
 * The read-only admin routes a tenant's key may read too, each answering only that tenant's records
 * (another tenant's session or turn is 404): the status, the session list, a turn, and the
 * dashboard's overview (the tenant's counts, without the charts), sessions and turns. Everything
 * else under /admin — writes, policies, training, erasure, experiments — needs the admin key.
 */
const tenantReadableRoute = /^\/admin\/(?:status|sessions|turns\/[^/]+|dashboard\/(?:overview|sessions(?:\/[^/]+\/turns)?|turns\/[^/]+))$/;

function routeLabel(path: string): string {
  if (path.endsWith('/chat/completions')) return 'chat';
  if (path.endsWith('/models')) return 'models';
  if (path.endsWith('/feedback')) return 'feedback';
  if (path.startsWith('/admin/')) return 'admin';
  if (path === '/healthz' || path === '/readyz' || path === '/metrics') return path.slice(1);
  return 'other';
}

export function createGatewayApp(context: GatewayContext): Hono<{ Variables: Variables }> {
  const app = new Hono<{ Variables: Variables }>();

  app.use('*', async (c, next) => {
    await next();
    context.metrics.requests.inc({ route: routeLabel(c.req.path), status: String(c.res.status) });
  });

  app.onError((error) => errorResponse(asClawrlError(error, context.logger)));
  app.notFound((c) => errorResponse(new ClawrlError('not_found', `Unknown route ${c.req.method} ${c.req.path}.`)));

  const authenticate = async (c: Context<{ Variables: Variables }>, next: () => Promise<void>) => {
    const trustedUserHeader = context.authenticator.trustedUserHeader;
    c.set('principal', context.authenticator.authenticate(c.req.header('authorization'), trustedUserHeader === undefined ? undefined : c.req.header(trustedUserHeader)));
    await next();
  };
  const requireAdmin = async (c: Context<{ Variables: Variables }>, next: () => Promise<void>) => {
    const principal = c.get('principal');
    const tenantReads = principal.kind === 'tenant' && c.req.method === 'GET' && tenantReadableRoute.test(c.req.path);
    // A tenant's key reads and edits its own users' memory (`admin/user-memory-routes.ts`).
    const tenantMemory = principal.kind === 'tenant' && tenantUserMemoryRoute.test(c.req.path);
    if (!tenantReads && !tenantMemory) context.authenticator.requireAdmin(principal);
    await next();
  };

  registerHealthRoutes(app, context);
  app.get('/metrics', async () => {
    const counts = await context.store.counts();
    context.metrics.queueDepth.set({ queue: 'awaiting-next-state' }, Math.max(0, counts.turns.trainable - counts.linked));
    context.metrics.queueDepth.set({ queue: 'awaiting-judgement' }, counts.judging.pending);
    context.metrics.recordTraining(await context.store.trainingSummary(), counts.judging.samples);
    context.metrics.recordJudging(counts.judging);
    return new Response(await context.metrics.registry.metrics(), {
      headers: { 'content-type': context.metrics.registry.contentType },
    });
  });

  // The served names (`--served-model-name`): the engine's own first, then its aliases.
  const modelObject = (id: string) => ({ id, object: 'model', created: 0, owned_by: 'clawrl' });
  const servedNames = [context.engine.modelId, ...context.modelAliases];
  for (const prefix of ['/v1', '/s/:sessionId/v1']) {
    app.use(`${prefix}/*`, authenticate);
    app.get(`${prefix}/models`, (c) => c.json({ object: 'list', data: servedNames.map(modelObject) }));
    // Model ids may hold a slash (`Qwen/Qwen3-4B`), so the id is the rest of the path.
    app.get(`${prefix}/models/:id{.+}`, (c) => {
      const id = c.req.param('id');
      if (!servedNames.includes(id)) throw new ClawrlError('not_found', `The model '${id}' does not exist.`, { param: 'model' });
      return c.json(modelObject(id));
    });
  }

  registerFeedbackRoute(app, context);

  app.use('/admin/*', authenticate, requireAdmin);
  registerAdminRoutes(app, context);
  registerPolicyRoutes(app, context);
  registerErasureRoutes(app, context);
  registerDashboardRoutes(app, context);
  registerUserMemoryRoutes(app, context);

  // The dashboard's page and assets are public: they hold no data, and the page asks for the admin
  // key before it reads any (`/admin/dashboard/*`).
  const asset = (name: string) => {
    const file = context.dashboardAssets?.get(name) ?? null;
    if (file === null) throw new ClawrlError('not_found', name === 'index.html' ? 'The dashboard is not built: run `npm run build`.' : `No dashboard file '${name}'.`);
    return new Response(file.body, { headers: { 'content-type': file.contentType, 'cache-control': name === 'index.html' ? 'no-cache' : 'max-age=3600' } });
  };
  app.get('/', () => asset('index.html'));
  app.get('/dashboard/:name{.+}', (c) => asset(c.req.param('name')));
  return app;
}
