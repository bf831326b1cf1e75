/**
 * Session and turn rows of the Postgres record store: the statements that read them and their
 * conversion to records. Prompt ids come back through the prompt chain (see
 * `reconstructPromptTokenIds`), messages through the message chain.
 */
import type { ChatMessage, ToolDefinition } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { FinishReason } from '../../spec/inference-engine.js';
import type {
  SessionCloseReason,
  SessionRecord,
  SessionStatus,
  TurnRecord,
  TurnStatus,
  TurnType,
} from '../../spec/records.js';
import { decodeFloat64Blob, decodeInt32Blob, reconstructPromptTokenIds } from '../../core/token-blob-codec.js';
import type { Queryable } from './postgres-database.js';
import { loadMessages } from './postgres-message-chain.js';

export interface SessionRow {
  id: string;
  tenant: string | null;
  status: SessionStatus;
  created_at: number;
  updated_at: number;
  closed_at: number | null;
  close_reason: SessionCloseReason | null;
  side_turns: number;
  turn_ids: string[];
}

export interface TurnRow {
  ordinal: number;
  id: string;
  session_id: string;
  turn_index: number;
  type: TurnType;
  status: TurnStatus;
  trainable: boolean;
  tenant: string | null;
  model: string;
  policy_version: number;
  messages_tip_id: number | null;
  message_count: number;
  tools: string;
  sampling: string;
  prompt_base_ordinal: number | null;
  prompt_suffix: Buffer;
  prompt_length: number;
  response_token_ids: Buffer;
  logprobs: Buffer;
  response: string;
  finish_reason: FinishReason;
  started_at: number;
  first_token_at: number | null;
  ended_at: number;
  error: string | null;
  reply_key: string | null;
  next_state: string | null;
  next_state_at: number | null;
}

export const sessionColumns = `session.id, session.tenant, session.status, session.created_at, session.updated_at,
  session.closed_at, session.close_reason, session.side_turns,
  ARRAY(SELECT turn.id FROM turns AS turn WHERE turn.session_id = session.id AND turn.turn_index >= 0
        ORDER BY turn.turn_index) AS turn_ids`;

export const selectTurnRow = `
  SELECT turn.ordinal, turn.id, turn.session_id, turn.turn_index, turn.type, turn.status, turn.trainable, turn.tenant,
    turn.model, turn.policy_version, turn.messages_tip_id, turn.message_count, tool_set.body AS tools, turn.sampling,
    turn.prompt_base_ordinal, turn.prompt_suffix, turn.prompt_length, turn.response_token_ids, turn.logprobs,
    turn.response, turn.finish_reason, turn.started_at, turn.first_token_at, turn.ended_at, turn.error,
    turn.reply_key, turn.next_state, turn.next_state_at
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

export function toSessionRecord(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    closedAt: row.closed_at,
    closeReason: row.close_reason,
    turnIds: row.turn_ids,
    sideTurns: row.side_turns,
  };
}

/** A stored turn's prompt and response ids. */
export async function loadTurnTokens(
  client: Queryable,
  ordinal: number,
): Promise<{ promptTokenIds: number[]; responseTokenIds: number[] }> {
  const { rows } = await client.query<{ prompt_prefix_length: number; prompt_suffix: Buffer; response_token_ids: Buffer }>(
    selectPromptChain,
    [ordinal],
  );
  const links = rows.map((link) => ({
    prefixLength: link.prompt_prefix_length,
    suffix: decodeInt32Blob(link.prompt_suffix),
    responseTokenIds: decodeInt32Blob(link.response_token_ids),
  }));
  const last = links.at(-1);
  if (last === undefined) throw new ClawrlError('store_error', `missing turn with ordinal ${ordinal}`);
  return { promptTokenIds: reconstructPromptTokenIds(links), responseTokenIds: last.responseTokenIds };
}

export async function toTurnRecord(client: Queryable, row: TurnRow): Promise<TurnRecord> {
  const [promptTokenIds, messages] = await Promise.all([
    row.prompt_base_ordinal === null
      ? decodeInt32Blob(row.prompt_suffix)
      : loadTurnTokens(client, row.ordinal).then((tokens) => tokens.promptTokenIds),
    loadMessages(client, row.messages_tip_id),
  ]);
  if (promptTokenIds.length !== row.prompt_length) {
    throw new ClawrlError(
      'store_error',
      `turn ${row.id}: rebuilt ${promptTokenIds.length} prompt ids, expected ${row.prompt_length}`,
    );
  }
  if (messages.length !== row.message_count) {
    throw new ClawrlError('store_error', `turn ${row.id}: rebuilt ${messages.length} messages, expected ${row.message_count}`);
  }
  return {
    id: row.id,
    sessionId: row.session_id,
    type: row.type,
    status: row.status,
    trainable: row.trainable,
    tenant: row.tenant,
    model: row.model,
    policyVersion: row.policy_version,
    messages,
    tools: JSON.parse(row.tools) as ToolDefinition[],
    sampling: JSON.parse(row.sampling) as TurnRecord['sampling'],
    promptTokenIds,
    responseTokenIds: decodeInt32Blob(row.response_token_ids),
    logprobs: decodeFloat64Blob(row.logprobs),
    response: JSON.parse(row.response) as ChatMessage,
    finishReason: row.finish_reason,
    timings: { startedAt: row.started_at, firstTokenAt: row.first_token_at, endedAt: row.ended_at },
    error: row.error,
    replyKey: row.reply_key,
    index: row.turn_index,
    nextState: row.next_state === null ? null : (JSON.parse(row.next_state) as ChatMessage[]),
    nextStateAt: row.next_state_at,
  };
}
