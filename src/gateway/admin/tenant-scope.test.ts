import { describe, expect, it } from 'vitest';
import type { SessionPageResponse } from './dashboard-api.js';
import { createTestGateway, type TestGateway } from '../testing/create-test-gateway.js';

const model = 'scripted-model';
const keys = { alice: 'alice-key-12345', bob: 'bob-key-1234567', admin: 'admin-key-12345' };
const as = (key: string) => ({ authorization: `Bearer ${key}` });

async function chat(gateway: TestGateway, key: string, sessionId: string): Promise<string> {
  const response = await gateway.chat({ model, messages: [{ role: 'user', content: `hi from ${sessionId}` }] }, { ...as(key), 'x-session-id': sessionId });
  expect(response.status).toBe(200);
  await response.json();
  return response.headers.get('x-clawrl-turn-id') ?? '';
}

describe('tenant keys on the admin routes', () => {
  it('read only their own sessions, turns and counts; another tenant\'s turn is 404; writes stay admin-only; the admin key sees all', async () => {
    const gateway = createTestGateway({ apiKeys: [{ tenant: 'alice', key: keys.alice }, { tenant: 'bob', key: keys.bob }], adminKey: keys.admin });
    const aliceTurn = await chat(gateway, keys.alice, 'alice-session');
    const bobTurn = await chat(gateway, keys.bob, 'bob-session');
    const get = (route: string, key: string) => gateway.app.request(route, { headers: as(key) });

    const aliceSessions = (await (await get('/admin/sessions', keys.alice)).json()) as { data: { id: string }[] };
    expect(aliceSessions.data.map((session) => session.id)).toEqual(['alice-session']);
    const adminSessions = (await (await get('/admin/sessions', keys.admin)).json()) as { data: { id: string }[] };
    expect(adminSessions.data.map((session) => session.id).sort()).toEqual(['alice-session', 'bob-session']);

    expect((await get(`/admin/turns/${aliceTurn}`, keys.alice)).status).toBe(200);
    expect((await get(`/admin/turns/${bobTurn}`, keys.alice)).status).toBe(404);
    expect((await get(`/admin/turns/${bobTurn}`, keys.admin)).status).toBe(200);
    expect((await get(`/admin/dashboard/turns/${bobTurn}`, keys.alice)).status).toBe(404);
    expect((await get('/admin/dashboard/sessions/bob-session/turns', keys.alice)).status).toBe(404);
    expect((await get('/admin/dashboard/sessions/alice-session/turns', keys.alice)).status).toBe(200);
    const page = (await (await get('/admin/dashboard/sessions', keys.bob)).json()) as SessionPageResponse;
    expect(page.data.map((session) => session.id)).toEqual(['bob-session']);

    expect(await (await get('/admin/status', keys.alice)).json()).toMatchObject({ tenant: 'alice', sessions: 1, turns: { main: 1, side: 0 }, feedback: 0 });
    expect(await (await get('/admin/status', keys.admin)).json()).toMatchObject({ sessions: 2 });

    // Feedback scores only the tenant's own turns.
    const feedback = (turnId: string) =>
      gateway.app.request('/v1/feedback', { method: 'POST', headers: { ...as(keys.alice), 'content-type': 'application/json' }, body: JSON.stringify({ turn_id: turnId, thumbs: 'up' }) });
    expect((await feedback(bobTurn)).status).toBe(404);
    expect((await feedback(aliceTurn)).status).toBe(200);

    for (const [method, route] of [['GET', '/admin/policies'], ['GET', '/admin/dashboard/overview'], ['DELETE', '/admin/sessions/alice-session'], ['POST', '/admin/training/pause']] as const) {
      expect((await gateway.app.request(route, { method, headers: as(keys.alice) })).status, `${method} ${route}`).toBe(403);
    }
  });
});
