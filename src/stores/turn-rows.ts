/**
 * The turn and session rows both SQL stores share, and their conversions to records: the stores
 * use the same columns and binary forms, and differ only in how they fetch the parts a row points
 * at (the prompt base chain, the message chain, the tool set), so those come in already rebuilt.
 */
import { decodeFloat64Blob, decodeInt32Blob, reconstructPromptTokenIds } from '../core/token-blob-codec.js';
import type { ChatMessage, ToolDefinition } from '../spec/chat.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { FinishReason } from '../spec/inference-engine.js';
import type { SessionCloseReason, SessionRecord, SessionStatus, TurnRecord, TurnStatus, TurnType, UntrainableReason } from '../spec/records.js';

export interface SessionRow {
  id: string;
  tenant: string | null;
  user_id: string | null;
  status: SessionStatus;
  created_at: number;
  updated_at: number;
  closed_at: number | null;
  close_reason: SessionCloseReason | null;
  side_turns: number;
}

/** The columns of a turn row as both stores read them (SQLite stores booleans as 0 or 1). */
export interface TurnRow {
  ordinal: number;
  id: string;
  session_id: string;
  turn_index: number;
  type: TurnType;
  status: TurnStatus;
  trainable: number | boolean;
  tenant: string | null;
  user_id: string | null;
  model: string;
  policy_version: number;
  messages_tip_id: number | null;
  message_count: number;
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
  untrainable_reason: UntrainableReason | null;
  superseded_by: string | null;
  next_state: string | null;
  next_state_at: number | null;
}

/** One turn of a prompt base chain, as the chain query returns it. */
export interface PromptLinkRow {
  prompt_prefix_length: number;
  prompt_suffix: Buffer;
  response_token_ids: Buffer;
}

export function toSessionRecord(row: SessionRow, turnIds: string[]): SessionRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    user: row.user_id,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    closedAt: row.closed_at,
    closeReason: row.close_reason,
    turnIds,
    sideTurns: row.side_turns,
  };
}

/** The prompt and response ids of the chain's last turn, from its links oldest first. */
export function turnTokensOf(links: readonly PromptLinkRow[], ordinal: number): { promptTokenIds: number[]; responseTokenIds: number[] } {
  const decoded = links.map((link) => ({
    prefixLength: link.prompt_prefix_length,
    suffix: decodeInt32Blob(link.prompt_suffix),
    responseTokenIds: decodeInt32Blob(link.response_token_ids),
  }));
  const last = decoded.at(-1);
  if (last === undefined) throw new ClawrlError('store_error', `missing turn with ordinal ${ordinal}`);
  return { promptTokenIds: reconstructPromptTokenIds(decoded), responseTokenIds: last.responseTokenIds };
}

/** The row's prompt ids when it has no base; otherwise they come from its chain (`turnTokensOf`). */
export function unchainedPromptTokenIds(row: TurnRow): number[] | null {
  return row.prompt_base_ordinal === null ? decodeInt32Blob(row.prompt_suffix) : null;
}

/** The turn record of `row`, given what it points at; a rebuild that lost ids or messages is a `store_error`. */
export function toTurnRecord(
  row: TurnRow,
  rebuilt: { promptTokenIds: number[]; messages: ChatMessage[]; tools: ToolDefinition[] },
): TurnRecord {
  const { promptTokenIds, messages, tools } = rebuilt;
  if (promptTokenIds.length !== row.prompt_length) {
    throw new ClawrlError('store_error', `turn ${row.id}: rebuilt ${promptTokenIds.length} prompt ids, expected ${row.prompt_length}`);
  }
  if (messages.length !== row.message_count) {
    throw new ClawrlError('store_error', `turn ${row.id}: rebuilt ${messages.length} messages, expected ${row.message_count}`);
  }
  return {
    id: row.id,
    sessionId: row.session_id,
    type: row.type,
    status: row.status,
    trainable: row.trainable === true || row.trainable === 1,
    tenant: row.tenant,
    user: row.user_id,
    model: row.model,
    policyVersion: row.policy_version,
    messages,
    tools,
    sampling: JSON.parse(row.sampling) as TurnRecord['sampling'],
    promptTokenIds,
    responseTokenIds: decodeInt32Blob(row.response_token_ids),
    logprobs: decodeFloat64Blob(row.logprobs),
    response: JSON.parse(row.response) as ChatMessage,
    finishReason: row.finish_reason,
    timings: { startedAt: row.started_at, firstTokenAt: row.first_token_at, endedAt: row.ended_at },
    error: row.error,
    replyKey: row.reply_key,
    untrainableReason: row.untrainable_reason,
    supersededBy: row.superseded_by,
    index: row.turn_index,
    nextState: row.next_state === null ? null : (JSON.parse(row.next_state) as ChatMessage[]),
    nextStateAt: row.next_state_at,
  };
}
