/**
 * The behaviour every `RecordStore` implementation must show: one contract per role of the seam
 * (`spec/record-store.ts`), and the events a store announces. Implementation-agnostic: it talks to
 * the store only through the seam, so the SQLite and Postgres stores run the very same suite.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordStore } from '../spec/record-store.js';
import type { StoreCounts } from '../spec/records.js';
import { runRecordErasureContract } from './record-erasure.contract.js';
import { runJudgingQueueContract } from './judging-queue.contract.js';
import { runPolicyRegistryContract } from './policy-registry.contract.js';
import { runRecordCountsContract } from './record-counts.contract.js';
import { createRecordingEvents, runRecordEventsContract, type RecordingEvents } from './record-events.contract.js';
import type { RecordEventsOptions } from './record-events.js';
import { runRecordReadsContract } from './record-reads.contract.js';
import { runRequestControlsContract } from './request-controls.contract.js';
import { runTrainingQueueContract } from './training-queue.contract.js';
import { runTurnLogContract } from './turn-log.contract.js';
import { runUserMemoryContract } from './user-memory.contract.js';

export interface RecordStoreContractOptions {
  name: string;
  /** A fresh, empty store for each test, announcing its writes to `events`. */
  createStore: (events: RecordEventsOptions) => Promise<RecordStore>;
  /** The store's counts recounted from its rows, which `counts()` must equal. */
  recount: (store: RecordStore) => Promise<StoreCounts>;
  /** Runs after each test, once the store is closed. */
  cleanup?: () => Promise<void>;
}

export function runRecordStoreContract(options: RecordStoreContractOptions): void {
  describe(`RecordStore contract: ${options.name}`, () => {
    let store: RecordStore;
    let events: RecordingEvents;

    beforeEach(async () => {
      events = createRecordingEvents();
      store = await options.createStore(events.options);
    });

    afterEach(async () => {
      await store.close();
      await options.cleanup?.();
    });

    runTurnLogContract(() => store);
    runJudgingQueueContract(() => store);
    runTrainingQueueContract(() => store);
    runPolicyRegistryContract(() => store);
    runRecordReadsContract(() => store);
    runRecordCountsContract(() => store, options.recount);
    runRecordEventsContract(() => ({ store, events }));
    runRequestControlsContract(() => store, options.recount);
    runRecordErasureContract(() => store, options.recount);
    runUserMemoryContract(() => store);

    it('closes idempotently', async () => {
      await store.upsertSession({ id: 's1', tenant: null, user: null, at: 100 });
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
    });
  });
}
