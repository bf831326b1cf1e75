/**
 * Reads the SQLite store's rows back as records (`../turn-rows.ts`): sessions with their main turn
 * ids, turns with their prompt ids rebuilt from the prefix chain and their messages from the
 * message chain.
 */
import type { SessionRecord, TurnRecord } from '../../spec/records.js';
import { toSessionRecord, toTurnRecord, turnTokensOf, unchainedPromptTokenIds } from '../turn-rows.js';
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
    return turnTokensOf(this.#statements.selectPromptChain.all(ordinal), ordinal);
  }

  session(row: SessionRow): SessionRecord {
    return toSessionRecord(row, this.#statements.selectMainTurnIds.all(row.id).map((turn) => turn.id));
  }

  turn(row: TurnRow): TurnRecord {
    return toTurnRecord(row, {
      promptTokenIds: unchainedPromptTokenIds(row) ?? this.tokens(row.ordinal).promptTokenIds,
      messages: this.#messageChain.load(row.messages_tip_id),
      tools: this.#messageChain.loadTools(row.tool_set_id),
    });
  }
}
