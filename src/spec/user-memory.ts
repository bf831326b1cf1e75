/**
 * The `UserMemory` role of the record store: what clawrl remembers of each user without training —
 * the hints the judge accepted for the user's turns, the user's explicit feedback, and notes an
 * operator wrote. A `RecordStore` plays it; the gateway fills and serves it (`--user-memory`), the
 * judge fills it and gives it to the OPD teacher, and the admin routes show and edit it.
 *
 * Memory contract: a user holds at most the `maximumEntries` a write names; adding past it drops
 * the entries written least recently (added, repeated or edited) first. Entries are unique per
 * user by their normalized text (`core/user-memory-text.ts`): adding one again refreshes it
 * instead of adding a copy. Erasure takes an entry with the turn it came from and with its user's
 * tenant (`record-erasure.ts`).
 */

/** Where an entry came from: a hint the judge accepted, a user's feedback, or a note an operator wrote. */
export type MemoryEntryKind = 'hint' | 'feedback' | 'note';

export const memoryEntryKinds: readonly MemoryEntryKind[] = ['hint', 'feedback', 'note'];

export interface MemoryEntryRecord {
  /** Unique in the store, increasing. */
  id: number;
  /** `tenant/name`, or a tenant for a key that names no user. */
  user: string;
  kind: MemoryEntryKind;
  /** Short and redacted: it is what the gateway kept of the hint or feedback. */
  text: string;
  /** The turn the hint or feedback was about; null for a note. */
  sourceTurnId: string | null;
  /** Epoch milliseconds. */
  createdAt: number;
  /** When it was last added again or edited: the bound drops the oldest of these first. */
  updatedAt: number;
}

export interface NewMemoryEntry {
  user: string;
  kind: MemoryEntryKind;
  text: string;
  sourceTurnId: string | null;
  at: number;
}

/** What adding an entry did: added it, or found it already there (then refreshed it); and which entries the bound dropped. */
export interface RememberResult {
  outcome: 'added' | 'repeated';
  entry: MemoryEntryRecord;
  droppedIds: number[];
}

/** What an edit did; an edit whose text another entry of the user already holds changes nothing. */
export type EditMemoryResult =
  | { outcome: 'edited'; entry: MemoryEntryRecord }
  | { outcome: 'missing' }
  | { outcome: 'duplicate'; existingId: number };

export interface MemoryEdit {
  text?: string;
  kind?: MemoryEntryKind;
}

/** A user the store knows of (from sessions or memory), with how much it holds of them. */
export interface UserSummary {
  user: string;
  sessions: number;
  turns: number;
  feedback: number;
  memoryEntries: number;
  /** The latest session touch or memory write; epoch milliseconds. */
  lastSeenAt: number;
}

export interface UserMemory {
  /** Adds an entry, or refreshes the user's entry with the same normalized text; then drops the user's oldest past `maximumEntries`. */
  remember(entry: NewMemoryEntry, maximumEntries: number): Promise<RememberResult>;
  /** The user's entries, oldest first (by creation): a block built from them only grows at its end. */
  listMemory(user: string): Promise<MemoryEntryRecord[]>;
  /** Changes an entry of `user`; `missing` for an unknown id or another user's entry. */
  editMemory(user: string, id: number, edit: MemoryEdit, at: number): Promise<EditMemoryResult>;
  /** Deletes an entry of `user`; false for an unknown id or another user's entry. */
  forgetMemory(user: string, id: number): Promise<boolean>;
  /** Users with a session or a memory entry, by name; only `tenant`'s users when given. */
  listUsers(options: { tenant?: string }): Promise<UserSummary[]>;
}
