/**
 * The redaction worker thread (`start-redaction-worker.ts`): builds the redactor from the spec it
 * is given and answers each request with the redacted texts. Its redactor remembers the texts it
 * saw lately, as the in-thread one does, so an agent's resent conversation costs its new messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createRedactor } from '../core/redaction/create-redactor.js';
import type { RedactionSpec } from '../core/redaction/redaction-spec.js';
import { answerRedactionRequest, type RedactionRequest, type RedactionReply } from './redaction-worker-protocol.js';

const redactor = createRedactor(workerData as RedactionSpec);

parentPort?.on('message', (request: RedactionRequest | 'close') => {
  if (request === 'close') {
    parentPort?.close();
    return;
  }
  try {
    parentPort?.postMessage(answerRedactionRequest(redactor, request));
  } catch (error) {
    parentPort?.postMessage({ id: request.id, kind: 'failed', message: error instanceof Error ? error.message : String(error) } satisfies RedactionReply);
  }
});
