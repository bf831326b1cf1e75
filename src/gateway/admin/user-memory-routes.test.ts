import { describe, expect, it } from 'vitest';
import type { MemoryEntryRecord } from '../../spec/user-memory.js';
import { createTestGateway, type TestGateway } from '../testing/create-test-gateway.js';
import type { RememberResponse, UserMemoryResponse, UsersResponse } from './dashboard-api.js';

const keys = { alice: 'alice-key-12345', other: 'other-key-12345', admin: 'admin-key-12345' };

function gateway(): TestGateway {
  return createTestGateway({
    apiKeys: [{ tenant: 'team', user: 'team/alice', key: keys.alice }, { tenant: 'other', key: keys.other }],
    adminKey: keys.admin,
    userMemory: { mode: 'context', maximumEntries: 3, maximumTokens: 400 },
  });
}

const call = (server: TestGateway, key: string, method: string, route: string, body?: unknown) =>
  server.app.request(route, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('the user memory admin routes', () => {
  it('add, list, edit and delete a user\'s entries, with the path\'s user as is or percent-encoded', async () => {
    const server = gateway();
    const added = await call(server, keys.admin, 'POST', '/admin/users/team/alice/memory', { text: '  Prefers   metric units. ' });
    expect(added.status).toBe(201);
    const { entry } = (await added.json()) as RememberResponse;
    expect(entry).toMatchObject({ user: 'team/alice', kind: 'note', text: 'Prefers metric units.', sourceTurnId: null });
    const again = await call(server, keys.admin, 'POST', '/admin/users/team%2Falice/memory', { text: 'prefers metric units', kind: 'hint' });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ outcome: 'repeated', entry: { id: entry.id } });

    const listed = (await (await call(server, keys.admin, 'GET', '/admin/users/team%2Falice/memory')).json()) as UserMemoryResponse;
    expect(listed).toMatchObject({ object: 'list', user: 'team/alice', mode: 'context', maximumEntries: 3, data: [{ id: entry.id }] });

    const edited = await call(server, keys.admin, 'PATCH', `/admin/users/team/alice/memory/${entry.id}`, { text: 'Prefers imperial units.' });
    expect(edited.status).toBe(200);
    expect(((await edited.json()) as MemoryEntryRecord).text).toBe('Prefers imperial units.');
    expect((await call(server, keys.admin, 'DELETE', `/admin/users/team/alice/memory/${entry.id}`)).status).toBe(200);
    expect((await call(server, keys.admin, 'DELETE', `/admin/users/team/alice/memory/${entry.id}`)).status).toBe(404);

    // A user with neither sessions nor memory is no longer known.
    const users = (await (await call(server, keys.admin, 'GET', '/admin/users')).json()) as UsersResponse;
    expect(users.data).toEqual([]);
  });

  it('answer invalid bodies and unknown entries in the project\'s error shape', async () => {
    const server = gateway();
    const empty = await call(server, keys.admin, 'POST', '/admin/users/team/alice/memory', { text: '   ' });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: { message: 'Invalid memory entry: text: text is empty', type: 'invalid_request_error', code: 'invalid_request', param: 'text' } });
    expect((await call(server, keys.admin, 'POST', '/admin/users/team/alice/memory', { text: 'ok', kind: 'rumour' })).status).toBe(400);
    expect((await call(server, keys.admin, 'POST', '/admin/users/team/alice/memory', { text: 'ok', extra: 1 })).status).toBe(400);
    expect((await call(server, keys.admin, 'PATCH', '/admin/users/team/alice/memory/1', {})).status).toBe(400);
    expect((await call(server, keys.admin, 'PATCH', '/admin/users/team/alice/memory/x', { text: 'new' })).status).toBe(400);
    expect((await call(server, keys.admin, 'PATCH', '/admin/users/team/alice/memory/99', { text: 'new' })).status).toBe(404);
    for (const user of ['a/b/c', 'team%2Fal%20ice', '%2Falice']) {
      expect(await (await call(server, keys.admin, 'GET', `/admin/users/${user}/memory`)).json(), user).toMatchObject({ error: { code: 'invalid_request', param: 'user' } });
    }
    const first = (await (await call(server, keys.admin, 'POST', '/admin/users/team/alice/memory', { text: 'One.' })).json()) as RememberResponse;
    await call(server, keys.admin, 'POST', '/admin/users/team/alice/memory', { text: 'Two.' });
    const duplicate = await call(server, keys.admin, 'PATCH', `/admin/users/team/alice/memory/${first.entry.id}`, { text: 'two' });
    expect(duplicate.status).toBe(400);
    expect(await duplicate.json()).toMatchObject({ error: { code: 'invalid_request', param: 'text' } });
  });

  it('keep the bound the server was started with', async () => {
    const server = gateway();
    for (const text of ['One.', 'Two.', 'Three.']) await call(server, keys.admin, 'POST', '/admin/users/team/alice/memory', { text });
    const fourth = (await (await call(server, keys.admin, 'POST', '/admin/users/team/alice/memory', { text: 'Four.' })).json()) as RememberResponse;
    expect(fourth.droppedIds).toHaveLength(1);
    const listed = (await (await call(server, keys.admin, 'GET', '/admin/users/team/alice/memory')).json()) as UserMemoryResponse;
    expect(listed.data.map((entry) => entry.text)).toEqual(['Two.', 'Three.', 'Four.']);
  });

  it('let a tenant\'s key read and edit its own users\' memory only; another tenant\'s user is unknown', async () => {
    const server = gateway();
    await call(server, keys.admin, 'POST', '/admin/users/other/memory', { text: 'Belongs to other.' });
    const own = await call(server, keys.alice, 'POST', '/admin/users/team/alice/memory', { text: 'Mine.' });
    expect(own.status).toBe(201);
    const { entry } = (await own.json()) as RememberResponse;
    expect((await call(server, keys.alice, 'PATCH', `/admin/users/team/alice/memory/${entry.id}`, { kind: 'hint' })).status).toBe(200);
    expect((await call(server, keys.alice, 'GET', '/admin/users/other/memory')).status).toBe(404);
    expect((await call(server, keys.alice, 'POST', '/admin/users/other/memory', { text: 'Sneaky.' })).status).toBe(404);
    expect((await call(server, keys.other, 'DELETE', `/admin/users/team/alice/memory/${entry.id}`)).status).toBe(404);
    const aliceUsers = (await (await call(server, keys.alice, 'GET', '/admin/users')).json()) as UsersResponse;
    expect(aliceUsers.data.map((user) => user.user)).toEqual(['team/alice']);
    const allUsers = (await (await call(server, keys.admin, 'GET', '/admin/users')).json()) as UsersResponse;
    expect(allUsers.data.map((user) => user.user)).toEqual(['other', 'team/alice']);
    // The rest of /admin stays the admin key's.
    expect((await call(server, keys.alice, 'DELETE', '/admin/sessions/s1')).status).toBe(403);
  });
});
