/**
 * The `RecordStore` seam: durable sessions, turns, the judge queue, judgements, feedback,
 * samples, training steps and policy versions. It is the intersection of its roles, each in its
 * own file, and services declare only the roles they use:
 * - `TurnLog` (`turn-log.ts`): what the gateway's turn recorder writes;
 * - `JudgingQueue` (`judging-queue.ts`): what the judge worker claims and records;
 * - `TrainingQueue` (`training-queue.ts`): what the trainer claims and commits;
 * - `PolicyRegistry` (`policy-registry.ts`): policy versions and activations, for policy serving;
 * - `RecordReads` (`record-reads.ts`): the read models of admin, the dashboard and offline commands;
 * - `RecordErasure` (`record-erasure.ts`): erasing sessions, tenants and periods, and the lineage of versions;
 * - `UserMemory` (`user-memory.ts`): each user's memory, which the gateway and the judge fill and use.
 * Only the adapters and the composition root (`src/cli`) hold the whole store, which adds `close`.
 *
 * Implementations: SQLite (embedded default) and Postgres. Every implementation runs
 * `runRecordStoreContract` from `src/stores/record-store.contract.ts`, which runs one contract per role.
 *
 * Durability contract: when a write method's promise resolves, the write survives `kill -9` of
 * the process.
 *
 * Storage contract: a session's shared message prefix and shared token prefix are stored once,
 * so a session's storage grows linearly with its length, not quadratically. Stores may also share
 * a prefix across sessions (the SQLite and Postgres stores share an agent's system prompt); every
 * turn's ids still rebuild exactly.
 */
import type { JudgingQueue } from './judging-queue.js';
import type { PolicyRegistry } from './policy-registry.js';
import type { RecordErasure } from './record-erasure.js';
import type { RecordReads } from './record-reads.js';
import type { TrainingQueue } from './training-queue.js';
import type { TurnLog } from './turn-log.js';
import type { UserMemory } from './user-memory.js';

export interface RecordStore extends TurnLog, JudgingQueue, TrainingQueue, PolicyRegistry, RecordReads, RecordErasure, UserMemory {
  /** Flushes and closes. Idempotent. */
  close(): Promise<void>;
}
