/**
 * Session and turn rows of the Postgres record store: the statements that read them, and what
 * their conversion to records (`../turn-rows.ts`) needs fetched: prompt ids through the prompt
 * chain (see `reconstructPromptTokenIds`), messages through the message chain.
 */
import type { ToolDefinition } from '../../spec/chat.js';
import type { SessionRecord, TurnRecord } from '../../spec/records.js';
import {
  toSessionRecord,
  toTurnRecord as turnRecordOf,
  turnTokensOf,
  unchainedPromptTokenIds,
  type PromptLinkRow,
  type SessionRow as StoredSessionRow,
  type TurnRow as StoredTurnRow,
} from '../turn-rows.js';
import type { Queryable } from './postgres-database.js';
import { loadMessages } from './postgres-message-chain.js';

export interface SessionRow extends StoredSessionRow {
  turn_ids: string[];
}

export interface TurnRow extends StoredTurnRow {
  trainable: boolean;
  tools: string;
}

export const sessionColumns = `session.id, session.tenant, session.user_id, session.status, session.created_at, session.updated_at,
  session.closed_at, session.close_reason, session.side_turns,
  ARRAY(SELECT turn.id FROM turns AS turn WHERE turn.session_id = session.id AND turn.turn_index >= 0
        ORDER BY turn.turn_index) AS turn_ids`;

export const selectTurnRow = `
  SELECT turn.ordinal, turn.id, turn.session_id, turn.turn_index, turn.type, turn.status, turn.trainable, turn.tenant, turn.user_id,
    turn.model, turn.policy_version, turn.messages_tip_id, turn.message_count, tool_set.body AS tools, turn.sampling,
    turn.prompt_base_ordinal, turn.prompt_suffix, turn.prompt_length, turn.response_token_ids, turn.logprobs,
    turn.response, turn.finish_reason, turn.started_at, turn.first_token_at, turn.ended_at, turn.error,
    turn.reply_key, turn.untrainable_reason, turn.superseded_by, turn.next_state, turn.next_state_at
  FROM turns AS turn JOIN tool_sets AS tool_set ON tool_set.id = turn.tool_set_id
`;

// The turn's prompt base chain, oldest first.
const selectPromptChain = `
  WITH RECURSIVE chain (ordinal, base_ordinal, prompt_prefix_length, prompt_suffix, response_token_ids, depth) AS (
    SELECT ordinal, prompt_base_ordinal, prompt_prefix_length, prompt_suffix, response_token_ids, 0
    FROM turns WHERE ordinal = $1
    UNION ALL
    SELECT turn.ordinal, turn.prompt_base_ordinal, turn.prompt_prefix_length, turn.prompt_suffix,
      turn.response_token_ids, chain.depth + 1
    FROM turns AS turn JOIN chain ON turn.ordinal = chain.base_ordinal
  )
  SELECT prompt_prefix_length, prompt_suffix, response_token_ids FROM chain ORDER BY depth DESC
`;

export function sessionRecordOf(row: SessionRow): SessionRecord {
  return toSessionRecord(row, row.turn_ids);
}

/** A stored turn's prompt and response ids. */
export async function loadTurnTokens(client: Queryable, ordinal: number): Promise<{ promptTokenIds: number[]; responseTokenIds: number[] }> {
  return turnTokensOf((await client.query<PromptLinkRow>(selectPromptChain, [ordinal])).rows, ordinal);
}

export async function toTurnRecord(client: Queryable, row: TurnRow): Promise<TurnRecord> {
  const [promptTokenIds, messages] = await Promise.all([
    unchainedPromptTokenIds(row) ?? loadTurnTokens(client, row.ordinal).then((tokens) => tokens.promptTokenIds),
    loadMessages(client, row.messages_tip_id),
  ]);
  return turnRecordOf(row, { promptTokenIds, messages, tools: JSON.parse(row.tools) as ToolDefinition[] });
}
