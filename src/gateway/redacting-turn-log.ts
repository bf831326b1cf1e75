/**
 * Redaction before anything is kept: the gateway's record store wrapped so that every text the
 * turn log writes — a turn's messages, tool calls and results, its reply, a next state, feedback
 * text and hints, a user's memory entries — goes through the redactor first. What the client receives is untouched; what is
 * stored, announced on the bus (ids only) and trained on is the redacted text.
 *
 * Token ids must spell the text they are stored with:
 * - a prompt that changed is re-rendered with the served model's tokenizer, when the gateway has it
 *   and rendering the original messages gives back exactly the ids the engine sampled from (no
 *   fitting, the same template), else by the serving engine itself (a one-token generation that
 *   reports the prompt's ids); the turn keeps its sampled response ids and log-probs and stays
 *   trainable: the trainer's truncated importance ratio corrects for the behaviour log-probs having
 *   been sampled under the unredacted prompt, as it does for any sampler/trainer mismatch.
 *   Otherwise the prompt ids are dropped and the turn is recorded but never trained.
 * - a reply that held a secret is recorded redacted with no response ids or log-probs, and is
 *   never trained: the model's own tokens spelled the secret.
 */
import type { ChatMessage, ToolDefinition } from '../spec/chat.js';
import type { NewFeedback, NewTurn } from '../spec/records.js';
import { addTally, emptyTally, type RedactionTally } from '../core/redaction/redact-conversation.js';
import { overrideMethods } from '../core/override-methods.js';
import type { ConversationRedactor } from './conversation-redactor.js';
import type { GatewayStore } from './gateway-context.js';

/** A way to know the served model's prompt ids for messages; null when it cannot tell. */
export type PromptTokenizer = (messages: ChatMessage[], tools: ToolDefinition[]) => Promise<number[] | null>;

export interface TurnRedaction {
  /** On a worker thread in the server (`start-redaction-worker.ts`), never the HTTP event loop. */
  redactor: ConversationRedactor;
  /**
   * The served model's tokenizer and chat template, when the gateway has its folder: checked
   * against the sampled ids (rendering the original messages must give them back) before use.
   */
  renderPrompt?: PromptTokenizer;
  /**
   * The serving engine itself (a one-token generation that reports the prompt's ids): used when
   * the local rendering is absent or does not give back the sampled ids. It renders as it did for
   * the turn, so its ids need no check.
   */
  engineTokenize?: PromptTokenizer;
  /** Told how much each recorded turn lost, by kind (never the text). */
  onRedacted?: (turnId: string, tally: RedactionTally) => void;
}

function sameIds(left: readonly number[], right: readonly number[]): boolean {
  return left.length === right.length && left.every((id, index) => id === right[index]);
}

/** The prompt ids for redacted messages, or null when they cannot be known to match what was sampled. */
async function rerenderedPrompt(redaction: TurnRedaction, turn: NewTurn, redacted: ChatMessage[]): Promise<number[] | null> {
  // An engine without exact ids gave none to replace.
  if (turn.promptTokenIds.length === 0) return null;
  if (redaction.renderPrompt !== undefined) {
    const original = await redaction.renderPrompt(turn.messages, turn.tools);
    if (original !== null && sameIds(original, turn.promptTokenIds)) return redaction.renderPrompt(redacted, turn.tools);
  }
  const ids = (await redaction.engineTokenize?.(redacted, turn.tools)) ?? null;
  return ids === null || ids.length === 0 ? null : ids;
}

/** The turn as it is kept: redacted text, ids that match it, trainable only if its ids are still the model's. */
export async function redactNewTurn(redaction: TurnRedaction, turn: NewTurn): Promise<{ turn: NewTurn; tally: RedactionTally }> {
  const { prompt, response, responseTally: replyTally, error, errorTally } = await redaction.redactor.redactTurn(turn);
  const tally = addTally(addTally(addTally(emptyTally(), errorTally), prompt.tally), replyTally);
  if (tally.count === 0) return { turn, tally };
  let { promptTokenIds, responseTokenIds, logprobs, trainable } = turn;
  if (prompt.tally.count > 0) {
    const rerendered = await rerenderedPrompt(redaction, turn, prompt.messages);
    if (rerendered === null) {
      promptTokenIds = [];
      trainable = false;
    } else {
      promptTokenIds = rerendered;
    }
  }
  if (replyTally.count > 0) {
    responseTokenIds = [];
    logprobs = [];
    trainable = false;
  }
  return { turn: { ...turn, messages: prompt.messages, response, error, promptTokenIds, responseTokenIds, logprobs, trainable }, tally };
}

/** The gateway's store, redacting what its turn log writes. */
export function createRedactingTurnLog<Store extends GatewayStore>(store: Store, redaction: TurnRedaction): Store {
  const { redactor } = redaction;
  const overrides: Pick<GatewayStore, 'recordTurn' | 'linkNextState' | 'recordFeedback' | 'remember' | 'editMemory'> = {
    async recordTurn(turn) {
      const redacted = await redactNewTurn(redaction, turn);
      if (redacted.tally.count > 0) redaction.onRedacted?.(turn.id, redacted.tally);
      return store.recordTurn(redacted.turn);
    },
    async linkNextState(turnId, nextState, at) {
      return store.linkNextState(turnId, (await redactor.redactMessages(nextState)).messages, at);
    },
    async recordFeedback(feedback: NewFeedback) {
      const text = feedback.text === null ? null : await redactor.redactText(feedback.text);
      const hint = feedback.hint === null ? null : await redactor.redactText(feedback.hint);
      return store.recordFeedback({ ...feedback, text, hint });
    },
    // A note an operator writes, or an edit, is kept as redacted as what the memory learned from feedback.
    async remember(entry, maximumEntries) {
      return store.remember({ ...entry, text: await redactor.redactText(entry.text) }, maximumEntries);
    },
    async editMemory(user, id, edit, at) {
      return store.editMemory(user, id, edit.text === undefined ? edit : { ...edit, text: await redactor.redactText(edit.text) }, at);
    },
  };
  return overrideMethods(store, overrides as Partial<Store>);
}
