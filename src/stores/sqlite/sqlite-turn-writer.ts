/**
 * Writing a turn into the SQLite record store (see `SqliteRecordStore.recordTurn`).
 */
import { canonicalJson } from '../canonical-json.js';
import type { PromptSequenceCache } from '../prompt-sequence-cache.js';
import type { SharedPromptRoots } from '../shared-prompt-roots.js';
import { commonPrefixLength, encodeFloat64Blob, encodeInt32Blob } from '../../core/token-blob-codec.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { NewTurn, TurnType } from '../../spec/records.js';
import type { KnownNode, MessageChain } from './message-chain.js';
import type { SqliteStatements } from './sqlite-statements.js';
import type { SqliteTurnReader } from './sqlite-turn-reader.js';

export interface InsertedTurn {
  ordinal: number;
  index: number;
  /** Message and tool nodes to remember once the turn has committed. */
  learned: KnownNode[];
  /** Stored with its whole prompt: a base for other sessions' first turns once committed. */
  root: boolean;
}

/** What writing a turn reads and writes besides the turn's own row. */
export interface SqliteTurnWriterContext {
  statements: SqliteStatements;
  messageChain: MessageChain;
  reader: SqliteTurnReader;
  sequences: PromptSequenceCache;
  roots: SharedPromptRoots;
}

/**
 * Inserts a turn; runs inside recordTurn's write. What it learned (nodes, a root) is for the caller to
 * remember once the write has committed.
 */
export function insertSqliteTurn(context: SqliteTurnWriterContext, turn: NewTurn): InsertedTurn {
  const session = context.statements.selectSession.get(turn.sessionId);
  if (session === undefined) {
    throw new ClawrlError('store_error', `cannot record turn ${turn.id}: unknown session ${turn.sessionId}`);
  }
  if (context.statements.selectTurnOrdinal.get(turn.id) !== undefined) {
    throw new ClawrlError('store_error', `turn ${turn.id} is already recorded`);
  }
  const index = turn.type === 'main' ? session.main_turns : -1;
  context.statements.countTurn.run(turn.type === 'main' ? 1 : 0, turn.type === 'side' ? 1 : 0, turn.sessionId);

  const base = promptBase(context, turn.sessionId, turn.type, turn.promptTokenIds);
  const messages = context.messageChain.store(turn.messages);
  const tools = context.messageChain.storeTools(turn.tools);
  const inserted = context.statements.insertTurn.run({
    id: turn.id,
    session_id: turn.sessionId,
    turn_index: index,
    type: turn.type,
    status: turn.status,
    trainable: turn.trainable ? 1 : 0,
    tenant: turn.tenant,
    user_id: turn.user,
    model: turn.model,
    policy_version: turn.policyVersion,
    messages_tip_id: messages.tipId,
    message_count: turn.messages.length,
    tool_set_id: tools.id,
    sampling: canonicalJson(turn.sampling),
    prompt_base_ordinal: base.ordinal,
    prompt_prefix_length: base.prefixLength,
    prompt_suffix: encodeInt32Blob(turn.promptTokenIds.slice(base.prefixLength), 'promptTokenIds'),
    prompt_length: turn.promptTokenIds.length,
    response_token_ids: encodeInt32Blob(turn.responseTokenIds, 'responseTokenIds'),
    logprobs: encodeFloat64Blob(turn.logprobs, 'logprobs'),
    response: canonicalJson(turn.response),
    finish_reason: turn.finishReason,
    started_at: turn.timings.startedAt,
    first_token_at: turn.timings.firstTokenAt,
    ended_at: turn.timings.endedAt,
    error: turn.error,
    reply_key: turn.replyKey,
    untrainable_reason: turn.untrainableReason ?? null,
    superseded_by: turn.supersededBy ?? null,
  });
  return {
    ordinal: Number(inserted.lastInsertRowid),
    index,
    learned: [...messages.learned, ...tools.learned],
    root: base.ordinal === null,
  };
}

/**
 * The session's previous turn of the same type and how much of its sequence this prompt repeats;
 * for a session's first turn (or one sharing nothing with it), a recent root sharing its prefix.
 */
function promptBase(
  context: SqliteTurnWriterContext,
  sessionId: string,
  type: TurnType,
  prompt: readonly number[],
): { ordinal: number | null; prefixLength: number } {
  const previous = context.statements.selectLastTurnOrdinalOfType.get(sessionId, type);
  if (previous !== undefined) {
    const sequence =
      context.sequences.recall(sessionId, type, previous.ordinal) ?? storedSequence(context.reader, previous.ordinal);
    const prefixLength = commonPrefixLength(sequence, prompt);
    if (prefixLength > 0) return { ordinal: previous.ordinal, prefixLength };
  }
  return context.roots.find(prompt) ?? { ordinal: null, prefixLength: 0 };
}

/** A stored turn's prompt followed by its response. */
function storedSequence(reader: SqliteTurnReader, ordinal: number): number[] {
  const { promptTokenIds, responseTokenIds } = reader.tokens(ordinal);
  return promptTokenIds.concat(responseTokenIds);
}
