/** Admin routes: read-only views of the record store in the shapes of the design brief §3. */
import type { Env, Hono } from 'hono';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { SessionStatus, TurnRecord } from '../spec/records.js';
import type { GatewayContext } from './gateway-context.js';

export function wireTurn(turn: TurnRecord): Record<string, unknown> {
  return {
    id: turn.id,
    sessionId: turn.sessionId,
    index: turn.index,
    type: turn.type,
    status: turn.status,
    trainable: turn.trainable,
    tenant: turn.tenant,
    model: turn.model,
    policyVersion: turn.policyVersion,
    messages: turn.messages,
    tools: turn.tools,
    sampling: turn.sampling,
    promptTokenIds: turn.promptTokenIds,
    responseTokenIds: turn.responseTokenIds,
    logprobs: turn.logprobs,
    response: turn.response,
    finishReason: turn.finishReason,
    timings: turn.timings,
    error: turn.error,
    nextState: turn.nextState,
    nextStateAt: turn.nextStateAt,
    // Judging and sample building arrive with the judge and trainer; until then no turn has any.
    judgement: null,
    samples: [],
  };
}

export async function statusOf(context: GatewayContext): Promise<Record<string, unknown>> {
  const counts = await context.store.counts();
  return {
    sessions: counts.sessions.open + counts.sessions.closed,
    sessionsOpen: counts.sessions.open,
    turns: { main: counts.turns.main, side: counts.turns.side, aborted: counts.turns.aborted, failed: counts.turns.failed },
    trainable: counts.turns.trainable,
    linked: counts.linked,
    judged: 0,
    samples: { ready: 0, trained: 0 },
    trainSteps: 0,
    policyVersion: 0,
    model: context.engine.modelId,
    engine: context.engine.engineId,
  };
}

export function registerAdminRoutes<Environment extends Env>(app: Hono<Environment>, context: GatewayContext): void {
  app.get('/admin/status', async (c) => c.json(await statusOf(context)));

  app.get('/admin/sessions', async (c) => {
    const status = c.req.query('status');
    if (status !== undefined && status !== 'open' && status !== 'closed') {
      throw new ClawrlError('invalid_request', "status must be 'open' or 'closed'", { param: 'status' });
    }
    const limit = Number(c.req.query('limit') ?? 100);
    const offset = Number(c.req.query('offset') ?? 0);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000 || !Number.isInteger(offset) || offset < 0) {
      throw new ClawrlError('invalid_request', 'limit must be 1..1000 and offset a non-negative integer');
    }
    const sessions = await context.store.listSessions({
      ...(status === undefined ? {} : { status: status as SessionStatus }),
      limit,
      offset,
    });
    return c.json({ object: 'list', data: sessions });
  });

  app.get('/admin/turns/:id', async (c) => {
    const turn = await context.store.getTurn(c.req.param('id'));
    if (turn === null) throw new ClawrlError('not_found', `No turn with id '${c.req.param('id')}'.`);
    return c.json(wireTurn(turn));
  });
}
