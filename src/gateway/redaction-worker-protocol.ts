/** The messages between the gateway and its redaction worker (`redaction-worker.ts`), and how either thread answers one. */
import type { ChatMessage } from '../spec/chat.js';
import type { Redactor } from '../core/redaction/create-redactor.js';
import { redactMessages, type RedactedMessages } from '../core/redaction/redact-conversation.js';
import { redactTurnTexts, type RedactedTurnTexts } from './conversation-redactor.js';

export type RedactionRequest =
  | { id: number; kind: 'turn'; texts: { messages: readonly ChatMessage[]; response: ChatMessage; error: string | null } }
  | { id: number; kind: 'messages'; messages: readonly ChatMessage[] }
  | { id: number; kind: 'text'; text: string };

export type RedactionReply =
  | { id: number; kind: 'turn'; result: RedactedTurnTexts }
  | { id: number; kind: 'messages'; result: RedactedMessages }
  | { id: number; kind: 'text'; result: string }
  | { id: number; kind: 'failed'; message: string };

/** The reply to a request, redacted with `redactor` in the calling thread. */
export function answerRedactionRequest(redactor: Redactor, request: RedactionRequest): RedactionReply {
  switch (request.kind) {
    case 'turn':
      return { id: request.id, kind: 'turn', result: redactTurnTexts(redactor, request.texts) };
    case 'messages':
      return { id: request.id, kind: 'messages', result: redactMessages(redactor, request.messages) };
    case 'text':
      return { id: request.id, kind: 'text', result: redactor.redact(request.text).text };
  }
}
