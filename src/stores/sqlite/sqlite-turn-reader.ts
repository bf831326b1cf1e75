/**
 * Reads the SQLite store's rows back as records: sessions with their main turn ids, turns with their
 * prompt ids rebuilt from the prefix chain and their messages from the message chain.
 */
import type { ChatMessage } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { SessionRecord, TurnRecord } from '../../spec/records.js';
import { decodeFloat64Blob, decodeInt32Blob, reconstructPromptTokenIds } from '../../core/token-blob-codec.js';
import type { MessageChain } from './message-chain.js';
import type { SessionRow, SqliteStatements, TurnRow } from './sqlite-statements.js';

export class SqliteTurnReader {
  readonly #statements: SqliteStatements;
  readonly #messageChain: MessageChain;

  constructor(statements: SqliteStatements, messageChain: MessageChain) {
    this.#statements = statements;
    this.#messageChain = messageChain;
  }

  /** A stored turn's prompt and response ids, its prompt rebuilt from the base chain. */
  tokens(ordinal: number): { promptTokenIds: number[]; responseTokenIds: number[] } {
    const links = this.#statements.selectPromptChain.all(ordinal).map((link) => ({
      prefixLength: link.prompt_prefix_length,
      suffix: decodeInt32Blob(link.prompt_suffix),
      responseTokenIds: decodeInt32Blob(link.response_token_ids),
    }));
    const last = links.at(-1);
    if (last === undefined) throw new ClawrlError('store_error', `missing turn with ordinal ${ordinal}`);
    return { promptTokenIds: reconstructPromptTokenIds(links), responseTokenIds: last.responseTokenIds };
  }

  session(row: SessionRow): SessionRecord {
    return {
      id: row.id,
      tenant: row.tenant,
      status: row.status,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      closedAt: row.closed_at,
      closeReason: row.close_reason,
      turnIds: this.#statements.selectMainTurnIds.all(row.id).map((turn) => turn.id),
      sideTurns: row.side_turns,
    };
  }

  turn(row: TurnRow): TurnRecord {
    const responseTokenIds = decodeInt32Blob(row.response_token_ids);
    const promptTokenIds =
      row.prompt_base_ordinal === null
        ? decodeInt32Blob(row.prompt_suffix)
        : this.tokens(row.ordinal).promptTokenIds;
    if (promptTokenIds.length !== row.prompt_length) {
      throw new ClawrlError(
        'store_error',
        `turn ${row.id}: rebuilt ${promptTokenIds.length} prompt ids, expected ${row.prompt_length}`,
      );
    }
    const messages = this.#messageChain.load(row.messages_tip_id);
    if (messages.length !== row.message_count) {
      throw new ClawrlError(
        'store_error',
        `turn ${row.id}: rebuilt ${messages.length} messages, expected ${row.message_count}`,
      );
    }
    return {
      id: row.id,
      sessionId: row.session_id,
      type: row.type,
      status: row.status,
      trainable: row.trainable === 1,
      tenant: row.tenant,
      model: row.model,
      policyVersion: row.policy_version,
      messages,
      tools: this.#messageChain.loadTools(row.tool_set_id),
      sampling: JSON.parse(row.sampling) as TurnRecord['sampling'],
      promptTokenIds,
      responseTokenIds,
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
}
