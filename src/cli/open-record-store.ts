/** Opens the record store named by `--store`: SQLite under `--data`, or Postgres at `--store-url`. */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createPostgresRecordStore, defaultPostgresSchema } from '../stores/postgres/create-postgres-record-store.js';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { RecordStore } from '../spec/record-store.js';

export interface StoreConfiguration {
  data: string;
  store: 'sqlite' | 'postgres';
  storeUrl: string | undefined;
}

/**
 * Splits `--store-url` into what pg connects to and the schema clawrl's tables live in: an optional
 * `schema` query parameter (`postgres://host/db?schema=clawrl_staging`), `clawrl` by default.
 */
export function parsePostgresStoreUrl(storeUrl: string): { connectionString: string; schema: string } {
  let url: URL;
  try {
    url = new URL(storeUrl);
  } catch (error) {
    throw new ClawrlError('configuration_error', '--store-url must be a postgres:// URL.', { param: 'storeUrl', cause: error });
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ClawrlError('configuration_error', `--store-url must be a postgres:// URL, got a ${url.protocol} URL.`, {
      param: 'storeUrl',
    });
  }
  const schema = url.searchParams.get('schema') ?? defaultPostgresSchema;
  url.searchParams.delete('schema');
  return { connectionString: url.toString(), schema };
}

/**
 * `recordsTurns`: the store the gateway records turns through on its HTTP thread; SQLite then
 * checkpoints its WAL from a worker thread instead of inside those commits.
 */
export async function openRecordStore(configuration: StoreConfiguration, options: { recordsTurns?: boolean } = {}): Promise<RecordStore> {
  if (configuration.store === 'postgres') {
    if (configuration.storeUrl === undefined || configuration.storeUrl === '') {
      throw new ClawrlError(
        'configuration_error',
        '--store postgres needs --store-url postgres://user:password@host:5432/database (or CLAWRL_STORE_URL).',
        { param: 'storeUrl' },
      );
    }
    return createPostgresRecordStore(parsePostgresStoreUrl(configuration.storeUrl));
  }
  mkdirSync(configuration.data, { recursive: true });
  const recordsTurns = options.recordsTurns === true;
  return createSqliteRecordStore({ path: path.join(configuration.data, 'clawrl.db'), checkpointInBackground: recordsTurns, neverWait: recordsTurns });
}
