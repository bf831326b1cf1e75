import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dropTestSchema, testPostgresUrl, uniqueTestSchema } from '../../stores/postgres/testing/test-postgres.js';
import { openRecordStore, parsePostgresStoreUrl } from './open-record-store.js';

describe('openRecordStore', () => {
  const cleanups: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('opens SQLite under --data', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'clawrl-open-store-'));
    cleanups.push(async () => rmSync(directory, { recursive: true, force: true }));
    const store = await openRecordStore({ data: path.join(directory, 'data'), store: 'sqlite', storeUrl: undefined });
    await store.upsertSession({ id: 's1', tenant: null, user: null, at: 1 });
    expect(await store.getSession('s1')).toMatchObject({ id: 's1', status: 'open' });
    await store.close();
  });

  it('opens Postgres at --store-url in the schema the URL names', async () => {
    const schema = uniqueTestSchema();
    cleanups.push(() => dropTestSchema(schema));
    const url = new URL(testPostgresUrl);
    url.searchParams.set('schema', schema);
    const store = await openRecordStore({ data: 'unused', store: 'postgres', storeUrl: url.toString() });
    await store.upsertSession({ id: 's1', tenant: null, user: null, at: 1 });
    await store.close();
    const again = await openRecordStore({ data: 'unused', store: 'postgres', storeUrl: url.toString() });
    expect(await again.getSession('s1')).toMatchObject({ id: 's1' });
    await again.close();
  });

  it('asks for --store-url with --store postgres, and for a postgres:// URL', async () => {
    await expect(openRecordStore({ data: 'unused', store: 'postgres', storeUrl: undefined })).rejects.toMatchObject({
      code: 'configuration_error',
      param: 'storeUrl',
    });
    expect(() => parsePostgresStoreUrl('mysql://host/db')).toThrow(/postgres:\/\//);
    expect(parsePostgresStoreUrl('postgres://user:pw@host:5433/db?schema=staging&sslmode=require')).toEqual({
      connectionString: 'postgres://user:pw@host:5433/db?sslmode=require',
      schema: 'staging',
    });
    expect(parsePostgresStoreUrl('postgresql://host/db').schema).toBe('clawrl');
  });
});
