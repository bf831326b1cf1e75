import { describe, expect, it } from 'vitest';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { createUserPolicyDirectory } from './create-user-policy-directory.js';

const version = (number: number, user: string | null) => ({
  version: number, parent: number === 0 ? null : 0, kind: number === 0 ? ('base' as const) : ('adapter' as const),
  files: {}, step: null, samples: 0, metrics: null, createdAt: number, user,
});

describe('createUserPolicyDirectory', () => {
  it('serves each user its lineage\'s active version, the base without one, and sees changes on refresh or once its snapshot is old', async () => {
    const store = createSqliteRecordStore({ path: ':memory:' });
    let now = 0;
    let reads = 0;
    const counted = { listPolicyVersions: async () => ((reads += 1), store.listPolicyVersions()) };
    const directory = createUserPolicyDirectory({ store: counted, now: () => now, maxAgeMs: 1_000 });
    await store.recordPolicyVersion(version(0, null), { activate: true });
    await store.recordPolicyVersion(version(1, 'acme/ann'), { activate: true });
    expect(await directory.versionFor('acme/ann')).toBe(1);
    expect(await directory.versionFor('acme/bob')).toBe(0);
    expect([await directory.ownerOf(0), await directory.ownerOf(1), await directory.ownerOf(9)]).toEqual([null, 'acme/ann', undefined]);
    expect(reads).toBe(1);

    await store.recordPolicyVersion(version(2, 'acme/bob'), { activate: true });
    expect(await directory.versionFor('acme/bob')).toBe(0);
    directory.refresh();
    expect(await directory.versionFor('acme/bob')).toBe(2);

    await store.activatePolicyVersion(0, 5);
    await store.recordPolicyVersion(version(3, 'acme/ann'), { activate: true });
    now += 999;
    expect(await directory.versionFor('acme/ann')).toBe(1);
    now += 1;
    expect(await directory.versionFor('acme/ann')).toBe(3);
    expect(reads).toBe(3);
    await store.close();
  });
});
