import { describe, expect, it } from 'vitest';
import type { OverviewResponse, SessionPageResponse, TenantOverviewResponse } from './dashboard-api.js';
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

    for (const [method, route] of [['GET', '/admin/policies'], ['GET', '/admin/dashboard/policies'], ['GET', '/admin/dashboard/experiments'], ['DELETE', '/admin/sessions/alice-session'], ['POST', '/admin/training/pause']] as const) {
      expect((await gateway.app.request(route, { method, headers: as(keys.alice) })).status, `${method} ${route}`).toBe(403);
    }
  });

  it('answer the dashboard overview with the tenant\'s own counts and no charts; the admin key gets every tenant\'s, with charts', async () => {
    const gateway = createTestGateway({ apiKeys: [{ tenant: 'alice', key: keys.alice }, { tenant: 'bob', key: keys.bob }], adminKey: keys.admin });
    await chat(gateway, keys.alice, 'alice-session');
    await chat(gateway, keys.bob, 'bob-session');
    await chat(gateway, keys.bob, 'bob-other-session');
    const overview = async (key: string) => {
      const response = await gateway.app.request('/admin/dashboard/overview?window=3600000&bucket=60000', { headers: as(key) });
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, unknown>;
    };

    const alice = (await overview(keys.alice)) as unknown as TenantOverviewResponse;
    expect(alice).toMatchObject({ tenant: 'alice', status: { tenant: 'alice', sessions: 1, turns: { main: 1, side: 0 }, feedback: 0 } });
    const bob = await overview(keys.bob);
    expect(bob).toMatchObject({ tenant: 'bob', status: { tenant: 'bob', sessions: 2, turns: { main: 2, side: 0 } } });
    // Nothing that adds up other tenants' traffic or the training reaches a tenant.
    for (const field of ['series', 'training', 'since', 'bucketMs']) expect(bob, field).not.toHaveProperty(field);
    expect(bob['status']).not.toHaveProperty('samples');
    expect(bob['status']).not.toHaveProperty('judging');

    const all = (await overview(keys.admin)) as unknown as OverviewResponse;
    expect(all.tenant).toBeNull();
    expect(all.status.sessions).toBe(3);
    expect(all.series.buckets.reduce((sum, bucket) => sum + bucket.mainTurns, 0)).toBe(3);
  });
});

describe('users inside tenants', () => {
  it('record the user the credentials name on the session, its turns and feedback, and the dashboard finds a user\'s sessions', async () => {
    const gateway = createTestGateway({ apiKeys: [{ tenant: 'acme', user: 'acme/alice', key: keys.alice }, { tenant: 'acme', key: keys.bob }], adminKey: keys.admin, trustedUserHeader: 'x-forwarded-user' });
    const aliceTurn = await chat(gateway, keys.alice, 'alice-session');
    const proxied = await gateway.chat({ model, messages: [{ role: 'user', content: 'hi' }] }, { ...as(keys.bob), 'x-session-id': 'carol-session', 'x-forwarded-user': 'carol' });
    await proxied.json();
    const feedback = await gateway.app.request('/v1/feedback', { method: 'POST', headers: { ...as(keys.alice), 'content-type': 'application/json' }, body: JSON.stringify({ turn_id: aliceTurn, thumbs: 'up' }) });
    expect(feedback.status).toBe(200);

    expect(await gateway.store.getSession('alice-session')).toMatchObject({ tenant: 'acme', user: 'acme/alice' });
    expect(await gateway.store.getSession('carol-session')).toMatchObject({ tenant: 'acme', user: 'acme/carol' });
    expect(await gateway.store.getTurn(aliceTurn)).toMatchObject({ tenant: 'acme', user: 'acme/alice' });
    expect((await gateway.store.listFeedback(aliceTurn))[0]).toMatchObject({ user: 'acme/alice' });
    const page = (await (await gateway.app.request('/admin/dashboard/sessions?search=acme%2Fcarol', { headers: as(keys.admin) })).json()) as SessionPageResponse;
    expect(page.data.map((session) => [session.id, session.user])).toEqual([['carol-session', 'acme/carol']]);
    // A key that names a user reads and scores only that user's records; the tenant's own key all of the tenant's.
    const carolTurn = (await gateway.store.getSession('carol-session'))?.turnIds[0] ?? '';
    const read = (route: string, key: string, extra: Record<string, string> = {}) => gateway.app.request(route, { headers: { ...as(key), ...extra } });
    expect((await read(`/admin/turns/${carolTurn}`, keys.alice)).status).toBe(404);
    expect((await read(`/admin/turns/${carolTurn}`, keys.bob)).status).toBe(200);
    expect((await read(`/admin/turns/${aliceTurn}`, keys.bob, { 'x-forwarded-user': 'carol' })).status).toBe(404);
    expect((await read('/admin/dashboard/sessions/carol-session/turns', keys.alice)).status).toBe(404);
    const listed = async (route: string, key: string) => ((await (await read(route, key)).json()) as { data: { id: string }[] }).data.map((session) => session.id).sort();
    expect(await listed('/admin/sessions?user=acme%2Fcarol', keys.alice)).toEqual(['alice-session']);
    expect(await listed('/admin/sessions', keys.bob)).toEqual(['alice-session', 'carol-session']);
    expect(await listed('/admin/dashboard/sessions', keys.alice)).toEqual(['alice-session']);
    const scoreCarol = await gateway.app.request('/v1/feedback', { method: 'POST', headers: { ...as(keys.alice), 'content-type': 'application/json' }, body: JSON.stringify({ turn_id: carolTurn, thumbs: 'down' }) });
    expect(scoreCarol.status).toBe(404);

    // A name that is not one is refused in the protocol's shape, and nothing is recorded.
    const refused = await gateway.chat({ model, messages: [{ role: 'user', content: 'hi' }] }, { ...as(keys.bob), 'x-forwarded-user': 'a b' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });
});
