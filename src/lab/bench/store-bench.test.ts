import { describe, expect, it } from 'vitest';
import { createPostgresRecordStore } from '../../stores/postgres/create-postgres-record-store.js';
import { dropTestSchema, testPostgresUrl, uniqueTestSchema } from '../../stores/postgres/testing/test-postgres.js';
import { createSqliteRecordStore } from '../../stores/sqlite/create-sqlite-record-store.js';
import { runStoreBench, type StoreBenchTarget } from './store-bench.js';

const workload = { sessions: 3, turnsPerSession: 4, concurrency: 2, systemPromptTokens: 500, claimBatch: 5 };
const sqlite: StoreBenchTarget = {
  name: 'sqlite',
  open: async () => createSqliteRecordStore({ path: ':memory:' }),
  cleanup: async () => undefined,
};

describe('runStoreBench', () => {
  it('records every turn and claims every sample in both stores, side by side', async () => {
    const schema = uniqueTestSchema();
    const result = await runStoreBench({
      workload,
      sqlite,
      postgres: {
        name: 'postgres',
        open: () => createPostgresRecordStore({ connectionString: testPostgresUrl, schema }),
        cleanup: () => dropTestSchema(schema),
      },
    });
    for (const figures of [result.sqlite, result.postgres]) {
      expect(figures).toMatchObject({ turns: 12, samplesClaimed: 12 });
      expect(figures?.turnsPerSecond).toBeGreaterThan(0);
      expect(figures?.samplesClaimedPerSecond).toBeGreaterThan(0);
    }
    expect(result.postgresUnavailable).toBeNull();
    expect(result.ratio?.turnsPerSecond).toBeGreaterThan(0);
  });

  it('reports why Postgres is missing and still measures SQLite', async () => {
    const result = await runStoreBench({
      workload,
      sqlite,
      postgres: {
        name: 'postgres',
        open: () => createPostgresRecordStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test' }),
        cleanup: async () => undefined,
      },
    });
    expect(result.postgres).toBeNull();
    expect(result.ratio).toBeNull();
    expect(result.postgresUnavailable).toContain('127.0.0.1:1');
    expect(result.sqlite).toMatchObject({ turns: 12, samplesClaimed: 12 });
  });
});
