/**
 * Erasure routes (admin key only): `DELETE /admin/sessions/{id}` erases a session and everything
 * derived from it; `POST /admin/erasures` with `{"session": id}`, `{"user": "tenant/name"}`, `{"tenant": name}` or
 * `{"before": ISO date or epoch ms}` erases what it names (what `clawrl data delete` calls). Both
 * answer the receipt (`data-eraser.ts`): what went, how many of each, the versions affected and
 * what `--on-delete` did about them. `GET /admin/policies/{version}/lineage` lists the samples that
 * trained a version (erased ones flagged), `GET /admin/tainted-versions` the versions whose lineage
 * holds an erased sample.
 */
import type { Env, Hono } from 'hono';
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ErasureTarget } from '../../spec/record-erasure.js';
import type { DataEraser } from '../data-eraser.js';
import type { GatewayContext } from '../gateway-context.js';

const erasureRequestSchema = z.union([
  z.strictObject({ session: z.string().min(1) }),
  z.strictObject({ user: z.string().min(1) }),
  z.strictObject({ tenant: z.string().min(1) }),
  z.strictObject({ before: z.union([z.number().int().nonnegative(), z.iso.datetime({ offset: true }), z.iso.date()]) }),
]);

/** The erasure a request body names. */
export function erasureTargetOf(body: unknown): ErasureTarget {
  const parsed = erasureRequestSchema.safeParse(body);
  if (!parsed.success) {
    throw new ClawrlError('invalid_request', 'An erasure names exactly one of {"session": id}, {"user": "tenant/name"}, {"tenant": name} or {"before": ISO date or epoch milliseconds}.');
  }
  const request = parsed.data;
  if ('session' in request) return { kind: 'session', sessionId: request.session };
  if ('user' in request) return { kind: 'user', user: request.user };
  if ('tenant' in request) return { kind: 'tenant', tenant: request.tenant };
  return { kind: 'before', before: typeof request.before === 'number' ? request.before : Date.parse(request.before) };
}

function requireEraser(context: GatewayContext): DataEraser {
  if (context.eraser === undefined) throw new ClawrlError('unsupported', 'This server does not erase records.');
  return context.eraser;
}

export function registerErasureRoutes<Environment extends Env>(app: Hono<Environment>, context: GatewayContext): void {
  app.delete('/admin/sessions/:id', async (c) => c.json(await requireEraser(context).erase({ kind: 'session', sessionId: c.req.param('id') })));

  app.get('/admin/policies/:version/lineage', async (c) => {
    const version = Number(c.req.param('version'));
    if (!Number.isSafeInteger(version) || version < 0) throw new ClawrlError('invalid_request', 'A policy version is a non-negative integer.', { param: 'version' });
    return c.json({ object: 'list', version, data: await requireEraser(context).lineage(version) });
  });

  app.get('/admin/tainted-versions', async (c) => c.json({ object: 'list', data: await requireEraser(context).taintedVersions() }));

  app.post('/admin/erasures', async (c) => {
    const body: unknown = await c.req.json().catch(() => {
      throw new ClawrlError('invalid_request', 'The body must be JSON.');
    });
    return c.json(await requireEraser(context).erase(erasureTargetOf(body)));
  });
}
