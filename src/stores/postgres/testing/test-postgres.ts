/**
 * The PostgreSQL the tests run against: `TEST_POSTGRES_URL`, or the development machines' and
 * CI's local server. Each store gets its own schema, dropped afterwards, so test files running in
 * parallel never see each other's rows. An unreachable server fails the tests: it is a required
 * service, like NATS, never a reason to skip.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { RecordStore } from '../../../spec/record-store.js';
import { createPostgresRecordStore } from '../create-postgres-record-store.js';
import { dropPostgresSchema } from '../drop-postgres-schema.js';
import type { RecordEventsOptions } from '../../record-events.js';

export const testPostgresUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function uniqueTestSchema(): string {
  return `clawrl_test_${process.pid}_${randomBytes(6).toString('hex')}`;
}

function unreachable(error: unknown): Error {
  return new Error(
    `PostgreSQL is not reachable at ${testPostgresUrl} (${String(error)}). The tests need it: run ` +
      'scripts/check-services.sh to start it, or point TEST_POSTGRES_URL at a server.',
    { cause: error },
  );
}

let reachable: Promise<void> | undefined;

/** Fails with a message naming scripts/check-services.sh when the server is not there. */
export async function checkTestPostgresReachable(): Promise<void> {
  reachable ??= connectOnce();
  return reachable;
}

async function connectOnce(): Promise<void> {
  const client = new pg.Client({ connectionString: testPostgresUrl, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw unreachable(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function openTestPostgresStore(schema: string, options: { poolSize?: number; events?: RecordEventsOptions } = {}): Promise<RecordStore> {
  await checkTestPostgresReachable();
  return createPostgresRecordStore({ connectionString: testPostgresUrl, schema, poolSize: 4, ...options });
}

export async function dropTestSchema(schema: string): Promise<void> {
  await dropPostgresSchema({ connectionString: testPostgresUrl, schema });
}

/** Runs SQL against `schema` outside any store, for checks of what is stored. */
export async function queryTestSchema<Row extends pg.QueryResultRow>(schema: string, sql: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: testPostgresUrl, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query<Row>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Undoes Postgres migrations 14 (user memory), 13 (policy scope), 12 (users), 11 (lineage and taints), 10 (turns' untrainable reason and supersession),
 * 9 (policy versions' lifecycle state), 8 (samples' rollout group) and 7 (the counters and their
 * triggers), for tests of upgrades from before them.
 */
export const rollBackRecordCountsSql = `
  DROP TABLE user_memory;
  DROP INDEX samples_ready_by_user, policy_versions_by_user, policy_activations_by_user;
  ALTER TABLE samples DROP COLUMN user_id;
  ALTER TABLE policy_versions DROP COLUMN user_id;
  ALTER TABLE policy_activations DROP COLUMN user_id;
  DROP INDEX sessions_by_user, turns_by_user, feedback_by_user;
  ALTER TABLE sessions DROP COLUMN user_id;
  ALTER TABLE turns DROP COLUMN user_id;
  ALTER TABLE feedback DROP COLUMN user_id;
  DROP TRIGGER policy_lineage_of_step ON training_steps;
  DROP FUNCTION policy_lineage_of_step;
  DROP TABLE policy_lineage, policy_taints;
  DROP INDEX samples_by_training_step, turns_by_messages_tip;
  DROP FUNCTION record_counts_turn_trainable CASCADE;
  ALTER TABLE turns DROP COLUMN untrainable_reason, DROP COLUMN superseded_by;
  ALTER TABLE policy_versions DROP COLUMN state, DROP COLUMN state_reason, DROP COLUMN state_changed_at, DROP COLUMN gate, DROP COLUMN canary;
  DROP INDEX samples_by_rollout_group;
  ALTER TABLE samples DROP COLUMN rollout_group, DROP COLUMN rollout_turn_index;
  DROP FUNCTION record_counts_sessions, record_counts_turn_inserted, record_counts_next_state_linked,
    record_counts_feedback_inserted, record_counts_judgements, record_counts_judge_queue, record_counts_samples CASCADE;
  DROP FUNCTION record_counts_add, record_counts_without_next_state;
  DROP TABLE record_count_deltas;
  DELETE FROM schema_migrations WHERE version >= 7;`;
