/** Opens the record store named by `--store` under `--data`, for the commands that read it directly. */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createSqliteRecordStore } from '../stores/sqlite/create-sqlite-record-store.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { RecordStore } from '../spec/record-store.js';

export interface StoreConfiguration {
  data: string;
  store: 'sqlite' | 'postgres';
  storeUrl: string | undefined;
}

export function openRecordStore(configuration: StoreConfiguration): RecordStore {
  if (configuration.store === 'postgres') {
    throw new ClawrlError('configuration_error', '--store postgres is not available in this version of clawrl yet; use --store sqlite.', {
      param: 'store',
    });
  }
  mkdirSync(configuration.data, { recursive: true });
  return createSqliteRecordStore({ path: path.join(configuration.data, 'clawrl.db') });
}
