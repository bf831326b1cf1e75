/**
 * Drops a Postgres record store's schema with everything in it: for benchmarks and tests that
 * create a throw-away store, and for operators resetting one. Irreversible.
 */
import { checkPostgresSchemaName } from './create-postgres-record-store.js';
import { PostgresDatabase } from './postgres-database.js';

export async function dropPostgresSchema(options: { connectionString: string; schema: string }): Promise<void> {
  checkPostgresSchemaName(options.schema);
  const database = new PostgresDatabase({ ...options, poolSize: 1 });
  try {
    await database.run('dropPostgresSchema', () => database.query(`DROP SCHEMA IF EXISTS ${options.schema} CASCADE`));
  } finally {
    await database.close();
  }
}
