/**
 * Every statement of the SQLite record store, prepared once per connection.
 */
import type Database from 'better-sqlite3';
import type { SessionCloseReason, SessionStatus, TurnType } from '../../spec/records.js';
import type { RecountRow } from '../record-counts.js';
import type { PromptLinkRow, SessionRow as StoredSessionRow, TurnRow as StoredTurnRow } from '../turn-rows.js';

export interface SessionRow extends StoredSessionRow {
  main_turns: number;
}

export interface TurnRow extends StoredTurnRow {
  trainable: number;
  tool_set_id: number;
  prompt_prefix_length: number;
}

export type TurnInsert = Omit<TurnRow, 'ordinal' | 'next_state' | 'next_state_at'>;

const insertableTurnColumns = `id, session_id, turn_index, type, status, trainable, tenant, user_id, model, policy_version,
  messages_tip_id, message_count, tool_set_id, sampling, prompt_base_ordinal, prompt_prefix_length, prompt_suffix,
  prompt_length, response_token_ids, logprobs, response, finish_reason, started_at, first_token_at, ended_at,
  error, reply_key, untrainable_reason, superseded_by`
  .split(',')
  .map((column) => column.trim());

// A turn with its next state, which lives in its own table (migration 4).
const turnWithNextState = `SELECT turn.ordinal, ${insertableTurnColumns.map((column) => `turn.${column}`).join(', ')},
  next.next_state, next.linked_at AS next_state_at
  FROM turns AS turn LEFT JOIN turn_next_states AS next ON next.turn_ordinal = turn.ordinal`;

// Newest first by creation time; rowid breaks ties so equal timestamps keep insertion order.
const sessionOrder = 'ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?';

export function sqliteStatements(database: Database.Database) {
  return {
    upsertSession: database.prepare<{ id: string; tenant: string | null; user: string | null; at: number }>(`
      INSERT INTO sessions (id, tenant, user_id, status, created_at, updated_at) VALUES (@id, @tenant, @user, 'open', @at, @at)
      ON CONFLICT (id) DO UPDATE SET
        status = 'open', closed_at = NULL, close_reason = NULL, updated_at = max(updated_at, excluded.updated_at)
    `),
    // The upsert's effect on a session that is open already (its close fields are null), without
    // assigning `status`, so SQLite leaves the two status indexes alone: ~30 µs a commit against ~80.
    touchOpenSession: database.prepare<[number, string]>(
      "UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ? AND status = 'open'",
    ),
    selectSession: database.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE id = ?'),
    listSessions: database.prepare<[number, number], SessionRow>(`SELECT * FROM sessions ${sessionOrder}`),
    listSessionsOfTenant: database.prepare<{ tenant: string; status: SessionStatus | null; limit: number; offset: number }, SessionRow>(
      'SELECT * FROM sessions WHERE tenant = @tenant AND (@status IS NULL OR status = @status) ORDER BY created_at DESC, rowid DESC LIMIT @limit OFFSET @offset',
    ),
    listSessionsOfUser: database.prepare<{ user: string; tenant: string | null; status: SessionStatus | null; limit: number; offset: number }, SessionRow>(
      'SELECT * FROM sessions WHERE user_id = @user AND (@tenant IS NULL OR tenant = @tenant) AND (@status IS NULL OR status = @status) ORDER BY created_at DESC, rowid DESC LIMIT @limit OFFSET @offset',
    ),
    listSessionsByStatus: database.prepare<[SessionStatus, number, number], SessionRow>(
      `SELECT * FROM sessions WHERE status = ? ${sessionOrder}`,
    ),
    closeSession: database.prepare<[number, SessionCloseReason, string]>(
      "UPDATE sessions SET status = 'closed', closed_at = ?, close_reason = ? WHERE id = ? AND status = 'open'",
    ),
    closeIdleSessions: database.prepare<[number, number], { id: string }>(`
      UPDATE sessions SET status = 'closed', closed_at = ?, close_reason = 'idle'
      WHERE status = 'open' AND updated_at < ? RETURNING id
    `),
    countTurn: database.prepare<[number, number, string]>(
      'UPDATE sessions SET main_turns = main_turns + ?, side_turns = side_turns + ? WHERE id = ?',
    ),
    selectMainTurnIds: database.prepare<[string], { id: string }>(
      'SELECT id FROM turns WHERE session_id = ? AND turn_index >= 0 ORDER BY turn_index',
    ),
    insertTurn: database.prepare<TurnInsert>(
      `INSERT INTO turns (${insertableTurnColumns.join(', ')})
       VALUES (${insertableTurnColumns.map((column) => `@${column}`).join(', ')})`,
    ),
    selectTurnOrdinal: database.prepare<[string], { ordinal: number }>('SELECT ordinal FROM turns WHERE id = ?'),
    selectTurn: database.prepare<[string], TurnRow>(`${turnWithNextState} WHERE turn.id = ?`),
    selectLastMainTurnReference: database.prepare<[string], { id: string; reply_key: string | null; linked: number }>(`
      SELECT id, reply_key, EXISTS (SELECT 1 FROM turn_next_states WHERE turn_ordinal = turns.ordinal) AS linked
      FROM turns WHERE session_id = ? AND turn_index >= 0 AND superseded_by IS NULL ORDER BY turn_index DESC LIMIT 1
    `),
    // A superseded turn keeps the first reason it was kept out of training (train-off stays train-off).
    markSuperseded: database.prepare<[string, string], { ordinal: number }>(`
      UPDATE turns SET trainable = 0, untrainable_reason = coalesce(untrainable_reason, 'superseded'), superseded_by = ?
      WHERE id = ? AND type = 'main' AND NOT EXISTS (SELECT 1 FROM turn_next_states WHERE turn_ordinal = turns.ordinal)
      RETURNING ordinal
    `),
    dequeueTurn: database.prepare<[number]>('DELETE FROM judge_queue WHERE turn_ordinal = ?'),
    selectLastTurnOrdinalOfType: database.prepare<[string, TurnType], { ordinal: number }>(
      'SELECT ordinal FROM turns WHERE session_id = ? AND type = ? ORDER BY ordinal DESC LIMIT 1',
    ),
    // The turn's prompt base chain, oldest first.
    selectPromptChain: database.prepare<[number], PromptLinkRow>(`
      WITH RECURSIVE chain (ordinal, base_ordinal, prompt_prefix_length, prompt_suffix, response_token_ids, depth) AS (
        SELECT ordinal, prompt_base_ordinal, prompt_prefix_length, prompt_suffix, response_token_ids, 0
        FROM turns WHERE ordinal = ?
        UNION ALL
        SELECT turn.ordinal, turn.prompt_base_ordinal, turn.prompt_prefix_length, turn.prompt_suffix,
          turn.response_token_ids, chain.depth + 1
        FROM turns AS turn JOIN chain ON turn.ordinal = chain.base_ordinal
      )
      SELECT prompt_prefix_length, prompt_suffix, response_token_ids FROM chain ORDER BY depth DESC
    `),
    // Only main turns have a next state; the first link wins.
    linkNextState: database.prepare<[string, number, string]>(`
      INSERT INTO turn_next_states (turn_ordinal, next_state, linked_at)
      SELECT ordinal, ?, ? FROM turns WHERE id = ? AND type = 'main'
      ON CONFLICT (turn_ordinal) DO NOTHING
    `),
    findByReplyKey: database.prepare<[string], { id: string; session_id: string }>(`
      SELECT turn.id, turn.session_id FROM turns AS turn JOIN sessions AS session ON session.id = turn.session_id
      WHERE turn.reply_key = ? AND session.status = 'open'
      ORDER BY turn.ordinal DESC LIMIT 1
    `),
    counters: database.prepare<[], { name: string; value: number }>('SELECT name, value FROM record_counts'),
    // The full recount the counters replace: the contract suites check the counters against it.
    recount: database.prepare<[], RecountRow>(`
      SELECT
        (SELECT count(*) FROM sessions WHERE status = 'open') AS open_sessions,
        (SELECT count(*) FROM sessions WHERE status = 'closed') AS closed_sessions,
        coalesce(sum(type = 'main'), 0) AS main_turns,
        coalesce(sum(type = 'side'), 0) AS side_turns,
        coalesce(sum(status = 'aborted'), 0) AS aborted_turns,
        coalesce(sum(status = 'failed'), 0) AS failed_turns,
        coalesce(sum(trainable), 0) AS trainable_turns,
        (SELECT count(*) FROM turn_next_states) AS linked_turns
      FROM turns
    `),
  };
}

export type SqliteStatements = ReturnType<typeof sqliteStatements>;
