/**
 * The `UserMemory` role in the Postgres store (`spec/user-memory.ts`). Several processes may write
 * one user's memory at once (the gateway's feedback, the judge's hints): a write takes a lock on
 * the user for its transaction, so its bound sees every entry written before it.
 */
import { normalizeMemoryText, tenantOfUser } from '../../core/user-memory-text.js';
import type { EditMemoryResult, MemoryEdit, MemoryEntryRecord, NewMemoryEntry, RememberResult, UserSummary } from '../../spec/user-memory.js';
import { checkMaximumEntries, type MemoryOwner, memoryEntryColumns, memoryEntryOf, userSummaryOf, userSummariesSql, type MemoryEntryRow, type UserSummaryRow } from '../user-memory-rows.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';

// One 64-bit key per user and schema; the two-key locks clawrl takes elsewhere are a separate key space.
const lockUser = (client: Queryable, user: string) =>
  client.query("SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/user-memory/' || $1, 0))", [user]);

export class PostgresUserMemory {
  readonly #database: PostgresDatabase;

  constructor(database: PostgresDatabase) {
    this.#database = database;
  }

  async remember(entry: NewMemoryEntry, maximumEntries: number): Promise<RememberResult> {
    checkMaximumEntries(maximumEntries);
    return this.#database.transaction(async (client) => {
      await lockUser(client, entry.user);
      const normalized = normalizeMemoryText(entry.text);
      const { rows: [written] } = await client.query<MemoryEntryRow & { inserted: boolean }>(
        `INSERT INTO user_memory (user_id, tenant, kind, text, normalized, source_turn_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
         ON CONFLICT (user_id, normalized) DO UPDATE SET updated_at = greatest(user_memory.updated_at, excluded.updated_at)
         RETURNING ${memoryEntryColumns}, (xmax = 0) AS inserted`,
        [entry.user, tenantOfUser(entry.user), entry.kind, entry.text, normalized, entry.sourceTurnId, entry.at],
      );
      const row = written as MemoryEntryRow & { inserted: boolean };
      // The entry just written is kept whatever the clocks say; the rest by when they were last written.
      const { rows: dropped } = await client.query<{ id: string }>(
        `DELETE FROM user_memory WHERE id IN (
           SELECT id FROM user_memory WHERE user_id = $1 ORDER BY id = $2 DESC, updated_at DESC, id DESC OFFSET $3)
         RETURNING id`,
        [entry.user, row.id, maximumEntries],
      );
      return { outcome: row.inserted ? 'added' : 'repeated', entry: memoryEntryOf(row), droppedIds: dropped.map((gone) => Number(gone.id)).sort((a, b) => a - b) };
    });
  }

  async list(user: string): Promise<MemoryEntryRecord[]> {
    const rows = await this.#database.rows<MemoryEntryRow>(`SELECT ${memoryEntryColumns} FROM user_memory WHERE user_id = $1 ORDER BY created_at, id`, [user]);
    return rows.map(memoryEntryOf);
  }

  async edit(user: string, id: number, edit: MemoryEdit, at: number): Promise<EditMemoryResult> {
    return this.#database.transaction(async (client) => {
      await lockUser(client, user);
      const { rows: [current] } = await client.query<MemoryEntryRow>(`SELECT ${memoryEntryColumns} FROM user_memory WHERE id = $1 AND user_id = $2`, [id, user]);
      if (current === undefined) return { outcome: 'missing' };
      const text = edit.text ?? current.text;
      const normalized = normalizeMemoryText(text);
      const { rows: [existing] } = await client.query<{ id: string }>('SELECT id FROM user_memory WHERE user_id = $1 AND normalized = $2 AND id <> $3', [user, normalized, id]);
      if (existing !== undefined) return { outcome: 'duplicate', existingId: Number(existing.id) };
      const { rows: [edited] } = await client.query<MemoryEntryRow>(
        `UPDATE user_memory SET text = $1, normalized = $2, kind = $3, updated_at = greatest(updated_at, $4) WHERE id = $5 RETURNING ${memoryEntryColumns}`,
        [text, normalized, edit.kind ?? current.kind, at, id],
      );
      return { outcome: 'edited', entry: memoryEntryOf(edited as MemoryEntryRow) };
    });
  }

  async forget(user: string, id: number): Promise<boolean> {
    const result = await this.#database.query('DELETE FROM user_memory WHERE id = $1 AND user_id = $2', [id, user]);
    return (result.rowCount ?? 0) > 0;
  }

  async listUsers(tenant: string | null): Promise<UserSummary[]> {
    const rows = await this.#database.rows<UserSummaryRow>(userSummariesSql({ tenant: '$1::text', greatest: 'greatest' }), [tenant]);
    return rows.map(userSummaryOf);
  }
}

/**
 * Deletes the memory an erasure takes (inside its transaction): entries of the erased turns, every
 * entry of an erased tenant's users, and every entry of an erased user.
 */
export async function erasePostgresMemory(client: Queryable, turnIds: readonly string[], owner: MemoryOwner): Promise<number> {
  const result = await client.query('DELETE FROM user_memory WHERE source_turn_id = ANY($1::text[]) OR tenant = $2 OR user_id = $3', [turnIds, owner.tenant, owner.user]);
  return result.rowCount ?? 0;
}
