/**
 * The user-memory rows both stores read (`user_memory`, SQLite migration 14 and Postgres migration
 * 13) and the records they become, so the two adapters share one conversion and one bound.
 */
import type { MemoryEntryKind, MemoryEntryRecord, UserSummary } from '../spec/user-memory.js';
import { ClawrlError } from '../spec/clawrl-error.js';

export interface MemoryEntryRow {
  id: number | string;
  user_id: string;
  kind: MemoryEntryKind;
  text: string;
  source_turn_id: string | null;
  created_at: number | string;
  updated_at: number | string;
}

export interface UserSummaryRow {
  user_id: string;
  sessions: number | string;
  turns: number | string;
  feedback: number | string;
  memory_entries: number | string;
  last_seen_at: number | string;
}

export const memoryEntryColumns = 'id, user_id, kind, text, source_turn_id, created_at, updated_at';

/**
 * The users of sessions and of memory with their counts, by name; only the tenant's (`tenant` and
 * `tenant/...`) when the parameter is not null. One statement for both stores: `tenant` is the
 * dialect's parameter, `greatest` its two-argument maximum.
 */
export function userSummariesSql(dialect: { tenant: string; greatest: 'max' | 'greatest' }): string {
  const { tenant, greatest } = dialect;
  return `
    WITH known (user_id) AS (SELECT user_id FROM sessions WHERE user_id IS NOT NULL UNION SELECT user_id FROM user_memory)
    SELECT known.user_id,
      (SELECT count(*) FROM sessions WHERE sessions.user_id = known.user_id) AS sessions,
      (SELECT count(*) FROM turns WHERE turns.user_id = known.user_id) AS turns,
      (SELECT count(*) FROM feedback WHERE feedback.user_id = known.user_id) AS feedback,
      (SELECT count(*) FROM user_memory WHERE user_memory.user_id = known.user_id) AS memory_entries,
      ${greatest}(coalesce((SELECT max(updated_at) FROM sessions WHERE sessions.user_id = known.user_id), 0),
        coalesce((SELECT max(updated_at) FROM user_memory WHERE user_memory.user_id = known.user_id), 0)) AS last_seen_at
    FROM known
    WHERE ${tenant} IS NULL OR known.user_id = ${tenant} OR substr(known.user_id, 1, length(${tenant}) + 1) = ${tenant} || '/'
    ORDER BY known.user_id`;
}

/** Postgres answers bigint as text; both stores' rows become numbers here. */
export function memoryEntryOf(row: MemoryEntryRow): MemoryEntryRecord {
  return {
    id: Number(row.id),
    user: row.user_id,
    kind: row.kind,
    text: row.text,
    sourceTurnId: row.source_turn_id,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export function userSummaryOf(row: UserSummaryRow): UserSummary {
  return {
    user: row.user_id,
    sessions: Number(row.sessions),
    turns: Number(row.turns),
    feedback: Number(row.feedback),
    memoryEntries: Number(row.memory_entries),
    lastSeenAt: Number(row.last_seen_at),
  };
}

/**
 * Whose memory an erasure takes whole: an erased tenant's (its users' entries) and an erased user's;
 * null for an erasure of sessions or periods, which takes only the entries their turns taught.
 */
export interface MemoryOwner {
  tenant: string | null;
  user: string | null;
}

/** A bound below one would drop the entry being added: refused before any write. */
export function checkMaximumEntries(maximumEntries: number): void {
  if (!Number.isSafeInteger(maximumEntries) || maximumEntries < 1) {
    throw new ClawrlError('invalid_request', `a user's memory holds at least one entry, got a bound of ${maximumEntries}`);
  }
}
