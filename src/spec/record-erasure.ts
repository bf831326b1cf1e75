/**
 * The `RecordErasure` role of the record store: erasing what a session, a user, a tenant or a period left
 * behind — turns, their messages (the nodes no other turn shares), next states, judgements,
 * feedback, hints, samples, queue rows, the memory entries they taught (`user-memory.ts`) — and the lineage that outlives it: which samples trained
 * each policy version, so a version trained on erased data can be named after the data is gone.
 * A `RecordStore` plays it; `clawrl data delete`, `DELETE /admin/sessions/{id}` and the retention
 * schedule use it (`src/gateway/data-eraser.ts`).
 *
 * Erasure contract: once `erase` resolves, no row of the store holds what the erased turns said,
 * and the store's counts equal its rows. Other turns stay exactly as they were (a turn whose stored
 * prompt was a prefix of an erased one's is rewritten whole first). The SQLite store also leaves
 * no residue in its database file or WAL (`secure_delete`, then the WAL truncated).
 */
import type { PolicyVersion } from './inference-engine.js';

/**
 * What to erase: one session, everything of one user (`tenant/name`, or a tenant's one user), everything
 * of one tenant (every user of its keys), or every turn that started before a time.
 */
export type ErasureTarget =
  | { kind: 'session'; sessionId: string }
  | { kind: 'user'; user: string }
  | { kind: 'tenant'; tenant: string }
  | { kind: 'before'; before: number };


/** How many rows of each kind went. */
export interface ErasedCounts {
  sessions: number;
  turns: number;
  /** Message nodes no remaining turn uses; the prefix nodes other turns share stay. */
  messages: number;
  nextStates: number;
  judgements: number;
  feedback: number;
  /** Hints among the erased judgements and feedback. */
  hints: number;
  samples: number;
  /** Judging-queue rows, and samples that were leased to a trainer. */
  queued: number;
  /** Memory entries (`user-memory.ts`) the erased turns taught, and every entry of an erased tenant's users. */
  memoryEntries: number;
}

/** What an erasure did, as `clawrl data delete` prints it. */
export interface ErasureReceipt {
  target: ErasureTarget;
  erasedAt: number;
  erased: ErasedCounts;
  /** Versions a step trained on an erased sample, ascending. */
  trainedOnErased: PolicyVersion[];
  /** Those and every version descended from one (their lineage holds an erased sample), ascending. */
  affectedVersions: PolicyVersion[];
  /**
   * Whether the storage itself was cleaned of the deleted bytes once the rows went: SQLite's WAL
   * truncated (false when readers kept it busy past the wait; the next erasure or checkpoint
   * truncates it), Postgres's tables vacuumed.
   */
  storageWiped: boolean;
}

/** The receipt and the ids that went, for erasing what other systems hold of them (the bus's events). */
export interface ErasureResult {
  receipt: ErasureReceipt;
  sessionIds: string[];
  turnIds: string[];
  sampleIds: string[];
}

/** A version whose lineage holds an erased sample. */
export interface TaintedVersion {
  version: PolicyVersion;
  /** Erased samples that trained this version itself (0 for one tainted only through its parent). */
  erasedSamples: number;
  /** When an erasure marked it; null for a version trained from a tainted one after that erasure. */
  markedAt: number | null;
  /** When it was retired (never to be served again); null while only marked. */
  retiredAt: number | null;
}

export interface RecordErasure {
  /** Erases what `target` names, marks the versions it taints, and returns the receipt. */
  erase(target: ErasureTarget, at: number): Promise<ErasureResult>;
  /** The versions whose lineage holds an erased sample, ascending. */
  listTaintedVersions(): Promise<TaintedVersion[]>;
  /** Records that `versions` are retired; returns how many were marked and not yet retired. */
  retireVersions(versions: readonly PolicyVersion[], at: number): Promise<number>;
  /**
   * Puts the remaining samples that trained any of `versions` back in the training queue (ready,
   * unleased), so the trainer trains them again from an untouched version; returns how many.
   */
  requeueSamplesOf(versions: readonly PolicyVersion[], at: number): Promise<number>;
  /** The ids of the samples that trained `version` (its own step, not its parents'), erased ones included. */
  listLineage(version: PolicyVersion): Promise<{ sampleId: string; erased: boolean }[]>;
}
