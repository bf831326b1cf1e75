/**
 * What the redacting turn log asks of a redactor: a turn's texts, a next state, a feedback text, each
 * answered asynchronously, so the regular expressions can run on a worker thread instead of the
 * HTTP event loop (`start-redaction-worker.ts`; a 50 KB agent prompt takes milliseconds to scan).
 * `createInlineConversationRedactor` runs them in the calling thread, for tests and one-shot
 * commands.
 */
import type { ChatMessage } from '../spec/chat.js';
import type { Redactor } from '../core/redaction/create-redactor.js';
import { emptyTally, redactCounted, redactMessage, redactMessages, type RedactedMessages, type RedactionTally } from '../core/redaction/redact-conversation.js';

/** A turn's texts as they are kept, with what each part lost. */
export interface RedactedTurnTexts {
  prompt: RedactedMessages;
  response: ChatMessage;
  responseTally: RedactionTally;
  error: string | null;
  errorTally: RedactionTally;
}

export interface ConversationRedactor {
  redactTurn(texts: { messages: readonly ChatMessage[]; response: ChatMessage; error: string | null }): Promise<RedactedTurnTexts>;
  redactMessages(messages: readonly ChatMessage[]): Promise<RedactedMessages>;
  redactText(text: string): Promise<string>;
  close(): Promise<void>;
}

/** The turn's texts redacted with `redactor`, in this thread: what the worker runs too. */
export function redactTurnTexts(redactor: Redactor, texts: { messages: readonly ChatMessage[]; response: ChatMessage; error: string | null }): RedactedTurnTexts {
  const responseTally = emptyTally();
  const errorTally = emptyTally();
  return {
    prompt: redactMessages(redactor, texts.messages),
    response: redactMessage(redactor, texts.response, responseTally),
    responseTally,
    error: texts.error === null ? null : redactCounted(redactor, texts.error, errorTally),
    errorTally,
  };
}

export function createInlineConversationRedactor(redactor: Redactor): ConversationRedactor {
  return {
    redactTurn: async (texts) => redactTurnTexts(redactor, texts),
    redactMessages: async (messages) => redactMessages(redactor, messages),
    redactText: async (text) => redactor.redact(text).text,
    close: async () => undefined,
  };
}
