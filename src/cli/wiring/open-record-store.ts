/** Opens the record store named by `--store`: SQLite under `--data`, or Postgres at `--store-url`. */
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { createPostgresRecordStore, defaultPostgresSchema } from '../../stores/postgres/create-postgres-record-store.js';
import { createSqliteRecordStore } from '../../stores/sqlite/create-sqlite-record-store.js';
import type { RecordEventsOptions } from '../../stores/record-events.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { RecordStore } from '../../spec/record-store.js';

/** The SQLite store's file inside `--data`. */
const sqliteFileName = 'clawrl.db';

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

/** Creates `--data` if it is missing; a path that cannot hold the store is named in one line. */
function prepareDataFolder(data: string): void {
  try {
    mkdirSync(data, { recursive: true });
    accessSync(data, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'EEXIST' ? 'a file is in the way, not a folder'
      : code === 'ENOTDIR' ? 'part of that path is a file, not a folder'
      : code === 'EACCES' || code === 'EPERM' ? 'this user may not read and write there'
      : (error as Error).message;
    throw new ClawrlError('configuration_error', `--data ${data} cannot hold the record store: ${reason}. Pass a folder this user can write (--data, CLAWRL_DATA).`, {
      param: 'data',
      cause: error,
    });
  }
}

export interface OpenRecordStoreOptions {
  /** The store the gateway records turns through (see below). */
  recordsTurns?: boolean;
  /**
   * Refuse a `--data` folder without a store rather than create one: for commands that only read
   * what a server recorded, where a mistyped folder would otherwise read as an empty store.
   */
  existing?: boolean;
  /** The bus the store announces its committed turns and samples on (`stores/record-events.ts`). */
  events?: RecordEventsOptions;
}

/**
 * `recordsTurns`: the store the gateway records turns through on its HTTP thread; SQLite then
 * checkpoints its WAL from a worker thread instead of inside those commits.
 */
export async function openRecordStore(configuration: StoreConfiguration, options: OpenRecordStoreOptions = {}): Promise<RecordStore> {
  const events = options.events === undefined ? {} : { events: options.events };
  if (configuration.store === 'postgres') {
    if (configuration.storeUrl === undefined || configuration.storeUrl === '') {
      throw new ClawrlError(
        'configuration_error',
        '--store postgres needs --store-url postgres://user:password@host:5432/database (or CLAWRL_STORE_URL).',
        { param: 'storeUrl' },
      );
    }
    return createPostgresRecordStore({ ...parsePostgresStoreUrl(configuration.storeUrl), ...events });
  }
  const file = path.join(configuration.data, sqliteFileName);
  if (options.existing === true && !existsSync(file)) {
    throw new ClawrlError(
      'configuration_error',
      `--data ${configuration.data} holds no clawrl store (no ${sqliteFileName} there). Pass the --data folder the server records into (CLAWRL_DATA; the server's default is ./.clawrl).`,
      { param: 'data' },
    );
  }
  prepareDataFolder(configuration.data);
  const recordsTurns = options.recordsTurns === true;
  return createSqliteRecordStore({ path: file, checkpointInBackground: recordsTurns, neverWait: recordsTurns, ...events });
}
