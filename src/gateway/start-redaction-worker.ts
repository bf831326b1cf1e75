/**
 * The gateway's redaction on a worker thread, so scanning an agent's conversation for secrets never
 * holds the HTTP event loop. One thread is enough: the redactor remembers recent texts, so a turn
 * costs the scan of its new messages (milliseconds for tens of KB), far below a turn's own time.
 *
 * Nothing is lost when the thread fails: the requests it held are redacted in this thread instead
 * (slower, still correct), and the next request starts a new thread.
 */
import { Worker } from 'node:worker_threads';
import { createRedactor, type Redactor } from '../core/redaction/create-redactor.js';
import type { RedactionSpec } from '../core/redaction/redaction-spec.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { ConversationRedactor } from './conversation-redactor.js';
import { answerRedactionRequest, type RedactionReply, type RedactionRequest } from './redaction-worker-protocol.js';

interface Pending {
  request: RedactionRequest;
  settle(reply: RedactionReply): void;
}

/** A request before the worker numbers it. */
type RequestBody = RedactionRequest extends infer Request ? (Request extends RedactionRequest ? Omit<Request, 'id'> : never) : never;

function mismatch(reply: RedactionReply, asked: RequestBody['kind']): ClawrlError {
  return new ClawrlError('internal_error', `the redaction worker answered ${reply.kind} to ${asked}`);
}

export interface RedactionWorkerOptions {
  /** The worker's module; default the built `redaction-worker.js` beside this file. */
  workerUrl?: URL;
  /** Told when the thread failed and its requests were redacted in this thread. */
  onWorkerFailed?: (error: Error) => void;
}

export function startRedactionWorker(spec: RedactionSpec, options: RedactionWorkerOptions = {}): ConversationRedactor {
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let worker: Worker | null = null;
  let closed = false;
  let inline: Redactor | null = null;

  /** The answer this thread gives, when the worker cannot. */
  function answerHere(request: RedactionRequest): RedactionReply {
    inline ??= createRedactor(spec);
    return answerRedactionRequest(inline, request);
  }

  function failed(thread: Worker, error: Error): void {
    if (worker !== thread) return;
    worker = null;
    options.onWorkerFailed?.(error);
    for (const [id, entry] of pending) {
      pending.delete(id);
      entry.settle(answerHere(entry.request));
    }
  }

  function started(): Worker {
    if (worker !== null) return worker;
    const thread = new Worker(options.workerUrl ?? new URL('./redaction-worker.js', import.meta.url), { workerData: spec });
    // Idle, it must not keep a finished process alive; requests in flight keep it referenced.
    thread.unref();
    thread.on('message', (reply: RedactionReply) => {
      const entry = pending.get(reply.id);
      if (entry === undefined) return;
      pending.delete(reply.id);
      if (pending.size === 0) thread.unref();
      entry.settle(reply.kind === 'failed' ? answerHere(entry.request) : reply);
    });
    thread.on('error', (error) => failed(thread, error));
    thread.on('exit', (code) => failed(thread, new Error(`the redaction worker exited with code ${code}`)));
    worker = thread;
    return thread;
  }

  function send(body: RequestBody): Promise<RedactionReply> {
    if (closed) return Promise.reject(new ClawrlError('internal_error', 'the redaction worker is closed'));
    const request = { ...body, id: (nextId += 1) } as RedactionRequest;
    return new Promise((resolve) => {
      pending.set(request.id, { request, settle: resolve });
      const thread = started();
      thread.ref();
      thread.postMessage(request);
    });
  }

  return {
    async redactTurn(texts) {
      const reply = await send({ kind: 'turn', texts });
      if (reply.kind !== 'turn') throw mismatch(reply, 'turn');
      return reply.result;
    },
    async redactMessages(messages) {
      const reply = await send({ kind: 'messages', messages });
      if (reply.kind !== 'messages') throw mismatch(reply, 'messages');
      return reply.result;
    },
    async redactText(text) {
      const reply = await send({ kind: 'text', text });
      if (reply.kind !== 'text') throw mismatch(reply, 'text');
      return reply.result;
    },
    async close() {
      closed = true;
      const thread = worker;
      worker = null;
      if (thread === null) return;
      const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
      thread.ref();
      thread.postMessage('close');
      await exited;
    },
  };
}
