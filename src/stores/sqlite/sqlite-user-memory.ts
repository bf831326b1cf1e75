/**
 * The `UserMemory` role in the SQLite store (`spec/user-memory.ts`). Synchronous: the store runs
 * each write inside its group commit, so a write's read-then-write (is the text already there? which
 * entries fall past the bound?) sees no other write between them.
 */
import type Database from 'better-sqlite3';
import { normalizeMemoryText, tenantOfUser } from '../../core/user-memory-text.js';
import type { EditMemoryResult, MemoryEdit, MemoryEntryRecord, NewMemoryEntry, RememberResult, UserSummary } from '../../spec/user-memory.js';
import { checkMaximumEntries, type MemoryOwner, memoryEntryColumns, memoryEntryOf, userSummaryOf, userSummariesSql, type MemoryEntryRow, type UserSummaryRow } from '../user-memory-rows.js';

export class SqliteUserMemory {
  readonly #database: Database.Database;

  constructor(database: Database.Database) {
    this.#database = database;
  }

  #entry(id: number): MemoryEntryRecord | null {
    const row = this.#database.prepare<[number], MemoryEntryRow>(`SELECT ${memoryEntryColumns} FROM user_memory WHERE id = ?`).get(id);
    return row === undefined ? null : memoryEntryOf(row);
  }

  #sameText(user: string, normalized: string): number | null {
    return this.#database.prepare<[string, string], { id: number }>('SELECT id FROM user_memory WHERE user_id = ? AND normalized = ?').get(user, normalized)?.id ?? null;
  }

  remember(entry: NewMemoryEntry, maximumEntries: number): RememberResult {
    checkMaximumEntries(maximumEntries);
    const normalized = normalizeMemoryText(entry.text);
    const existing = this.#sameText(entry.user, normalized);
    let id: number;
    if (existing === null) {
      id = Number(
        this.#database
          .prepare(`INSERT INTO user_memory (user_id, tenant, kind, text, normalized, source_turn_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
          .run(entry.user, tenantOfUser(entry.user), entry.kind, entry.text, normalized, entry.sourceTurnId, entry.at, entry.at).lastInsertRowid,
      );
    } else {
      id = existing;
      this.#database.prepare('UPDATE user_memory SET updated_at = max(updated_at, ?) WHERE id = ?').run(entry.at, id);
    }
    // The entry just written is kept whatever the clocks say; the rest by when they were last written.
    const dropped = this.#database
      .prepare<[string, number, number], { id: number }>('SELECT id FROM user_memory WHERE user_id = ? ORDER BY id = ? DESC, updated_at DESC, id DESC LIMIT -1 OFFSET ?')
      .all(entry.user, id, maximumEntries)
      .map((row) => row.id);
    const remove = this.#database.prepare<[number]>('DELETE FROM user_memory WHERE id = ?');
    for (const droppedId of dropped) remove.run(droppedId);
    return { outcome: existing === null ? 'added' : 'repeated', entry: this.#entry(id) as MemoryEntryRecord, droppedIds: dropped.sort((a, b) => a - b) };
  }

  list(user: string): MemoryEntryRecord[] {
    return this.#database
      .prepare<[string], MemoryEntryRow>(`SELECT ${memoryEntryColumns} FROM user_memory WHERE user_id = ? ORDER BY created_at, id`)
      .all(user)
      .map(memoryEntryOf);
  }

  edit(user: string, id: number, edit: MemoryEdit, at: number): EditMemoryResult {
    const current = this.#entry(id);
    if (current === null || current.user !== user) return { outcome: 'missing' };
    const text = edit.text ?? current.text;
    const normalized = normalizeMemoryText(text);
    const existing = this.#sameText(user, normalized);
    if (existing !== null && existing !== id) return { outcome: 'duplicate', existingId: existing };
    this.#database
      .prepare('UPDATE user_memory SET text = ?, normalized = ?, kind = ?, updated_at = max(updated_at, ?) WHERE id = ?')
      .run(text, normalized, edit.kind ?? current.kind, at, id);
    return { outcome: 'edited', entry: this.#entry(id) as MemoryEntryRecord };
  }

  forget(user: string, id: number): boolean {
    return this.#database.prepare('DELETE FROM user_memory WHERE id = ? AND user_id = ?').run(id, user).changes > 0;
  }

  listUsers(tenant: string | null): UserSummary[] {
    return this.#database
      .prepare<{ tenant: string | null }, UserSummaryRow>(userSummariesSql({ tenant: '@tenant', greatest: 'max' }))
      .all({ tenant })
      .map(userSummaryOf);
  }
}

/**
 * Deletes the memory an erasure takes (inside its transaction): entries of the erased turns, every
 * entry of an erased tenant's users, and every entry of an erased user.
 */
export function eraseSqliteMemory(database: Database.Database, turnIds: readonly string[], owner: MemoryOwner): number {
  return database
    .prepare<{ turns: string; tenant: string | null; user: string | null }>('DELETE FROM user_memory WHERE source_turn_id IN (SELECT value FROM json_each(@turns)) OR tenant = @tenant OR user_id = @user')
    .run({ turns: JSON.stringify(turnIds), ...owner }).changes;
}
