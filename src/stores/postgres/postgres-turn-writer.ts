/**
 * Writing a turn into the Postgres record store (see `PostgresRecordStore.recordTurn`).
 */
import { canonicalJson } from '../canonical-json.js';
import type { PromptSequenceCache } from '../prompt-sequence-cache.js';
import type { SharedPromptRoots } from '../shared-prompt-roots.js';
import { commonPrefixLength, encodeInt32Blob } from '../../core/token-blob-codec.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { NewTurn, TurnType } from '../../spec/records.js';
import type { Queryable } from './postgres-database.js';
import { storeMessages, storeTools } from './postgres-message-chain.js';
import { loadTurnTokens } from './postgres-turn-rows.js';

/**
 * Inserts a turn inside the caller's transaction: counts it in its session (taking the session's
 * row lock first, so concurrent turns of one session serialize), diffs its prompt against the
 * session's previous turn of the same type (a session's first turn against a recent root), and stores
 * its messages and tools once. `root` says the prompt was stored whole, for the caller to remember
 * after the commit.
 */
export async function insertTurn(
  client: Queryable,
  turn: NewTurn,
  encoded: { response: Buffer; logprobs: Buffer },
  bases: { sequences: PromptSequenceCache; roots: SharedPromptRoots },
): Promise<{ ordinal: number; index: number; root: boolean }> {
  const isMain = turn.type === 'main';
  // First, so that concurrent turns of the session queue behind this row lock.
  const [session] = (
    await client.query<{ main_turns: number }>(
      'UPDATE sessions SET main_turns = main_turns + $2, side_turns = side_turns + $3 WHERE id = $1 RETURNING main_turns',
      [turn.sessionId, isMain ? 1 : 0, isMain ? 0 : 1],
    )
  ).rows;
  if (session === undefined) {
    throw new ClawrlError('store_error', `cannot record turn ${turn.id}: unknown session ${turn.sessionId}`);
  }
  const base = await promptBase(client, bases, turn.sessionId, turn.type, turn.promptTokenIds);
  const messagesTipId = await storeMessages(client, turn.messages);
  const toolSetId = await storeTools(client, turn.tools);
  const index = isMain ? session.main_turns - 1 : -1;
  const [inserted] = (
    await client.query<{ ordinal: number }>(
      `INSERT INTO turns (id, session_id, turn_index, type, status, trainable, tenant, user_id, model, policy_version,
         messages_tip_id, message_count, tool_set_id, sampling, prompt_base_ordinal, prompt_prefix_length,
         prompt_suffix, prompt_length, response_token_ids, logprobs, response, finish_reason, started_at,
         first_token_at, ended_at, error, reply_key, untrainable_reason, superseded_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
         $23, $24, $25, $26, $27, $28, $29)
       RETURNING ordinal`,
      [
        turn.id,
        turn.sessionId,
        index,
        turn.type,
        turn.status,
        turn.trainable,
        turn.tenant,
        turn.user,
        turn.model,
        turn.policyVersion,
        messagesTipId,
        turn.messages.length,
        toolSetId,
        canonicalJson(turn.sampling),
        base.ordinal,
        base.prefixLength,
        encodeInt32Blob(turn.promptTokenIds.slice(base.prefixLength), 'promptTokenIds'),
        turn.promptTokenIds.length,
        encoded.response,
        encoded.logprobs,
        canonicalJson(turn.response),
        turn.finishReason,
        turn.timings.startedAt,
        turn.timings.firstTokenAt,
        turn.timings.endedAt,
        turn.error,
        turn.replyKey,
        turn.untrainableReason ?? null,
        turn.supersededBy ?? null,
      ],
    )
  ).rows;
  if (inserted === undefined) throw new ClawrlError('store_error', `turn ${turn.id} was not inserted`);
  return { ordinal: inserted.ordinal, index, root: base.ordinal === null };
}

/**
 * The session's previous turn of the same type and how much of its sequence this prompt repeats;
 * for a session's first turn (or one sharing nothing with it), a recent root sharing its prefix.
 */
async function promptBase(
  client: Queryable,
  { sequences, roots }: { sequences: PromptSequenceCache; roots: SharedPromptRoots },
  sessionId: string,
  type: TurnType,
  prompt: readonly number[],
): Promise<{ ordinal: number | null; prefixLength: number }> {
  const [previous] = (
    await client.query<{ ordinal: number }>(
      'SELECT ordinal FROM turns WHERE session_id = $1 AND type = $2 ORDER BY ordinal DESC LIMIT 1',
      [sessionId, type],
    )
  ).rows;
  if (previous !== undefined) {
    let sequence: ArrayLike<number> | undefined = sequences.recall(sessionId, type, previous.ordinal);
    if (sequence === undefined) {
      const tokens = await loadTurnTokens(client, previous.ordinal);
      sequence = [...tokens.promptTokenIds, ...tokens.responseTokenIds];
    }
    const prefixLength = commonPrefixLength(sequence, prompt);
    if (prefixLength > 0) return { ordinal: previous.ordinal, prefixLength };
  }
  return roots.find(prompt) ?? { ordinal: null, prefixLength: 0 };
}
