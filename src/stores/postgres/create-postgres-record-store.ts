/**
 * The Postgres record store, for several gateway, judge and trainer processes sharing one source
 * of truth. Opening it applies any pending migrations (see `postgres-migrations.ts`) under an
 * advisory lock, so processes may start together.
 *
 * All tables live in one schema (`clawrl` unless told otherwise), created if missing; several
 * independent stores (deployments, test runs) can share a database under different schemas.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { RecordStore } from '../../spec/record-store.js';
import { checkPostgresAnswers, PostgresDatabase } from './postgres-database.js';
import type { RecordEventsOptions } from '../record-events.js';
import { applyPostgresMigrations } from './postgres-migrations.js';
import { PostgresRecordStore } from './postgres-record-store.js';

export interface PostgresRecordStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  connectionString: string;
  /** Lower-case letters, digits and underscores; default `clawrl`. */
  schema?: string;
  /** Connections in the pool; default 10. */
  poolSize?: number;
  /** How long opening waits for the server to answer; default 5000. */
  connectTimeoutMs?: number;
  /** Where to announce committed turns and samples (`record-events.ts`); absent, nothing is announced. */
  events?: RecordEventsOptions;
}

export const defaultPostgresSchema = 'clawrl';
const defaultPoolSize = 10;
const defaultConnectTimeoutMs = 5_000;

/** Throws a `configuration_error` unless `schema` is a plain identifier, safe to splice into SQL unquoted. */
export function checkPostgresSchemaName(schema: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new ClawrlError(
      'configuration_error',
      `Postgres schema name ${JSON.stringify(schema)} must be 1-63 lower-case letters, digits or underscores, not starting with a digit`,
      { param: 'schema' },
    );
  }
}

/** The connection string without its password, for messages. */
export function redactConnectionString(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return '(unparseable connection string)';
  }
}

export async function createPostgresRecordStore(options: PostgresRecordStoreOptions): Promise<RecordStore> {
  const schema = options.schema ?? defaultPostgresSchema;
  checkPostgresSchemaName(schema);
  const poolSize = options.poolSize ?? defaultPoolSize;
  if (!Number.isInteger(poolSize) || poolSize < 1) {
    throw new ClawrlError('configuration_error', `Postgres pool size must be a positive integer, got ${poolSize}`, {
      param: 'poolSize',
    });
  }
  if (/[?&]options=/.test(options.connectionString)) {
    // pg lets the URL's options replace the pool's, which would silently drop the schema's search_path.
    throw new ClawrlError('configuration_error', 'the Postgres connection string must not set `options`; use the schema option', {
      param: 'connectionString',
    });
  }
  const database = new PostgresDatabase({ connectionString: options.connectionString, schema, poolSize });
  try {
    await checkPostgresAnswers(options.connectionString, options.connectTimeoutMs ?? defaultConnectTimeoutMs);
    await applyPostgresMigrations(database, schema);
    return new PostgresRecordStore(database, options.events);
  } catch (error) {
    await database.close().catch(() => undefined);
    if (ClawrlError.isInstance(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new ClawrlError(
      'store_error',
      `cannot open the Postgres record store at ${redactConnectionString(options.connectionString)} (schema ${schema}): ${message}`,
      { cause: error },
    );
  }
}
