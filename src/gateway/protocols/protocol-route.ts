/**
 * What the gateway's request listener needs of a protocol route (chat completions, Responses,
 * Messages): a handler from an authenticated, size-checked request to a reply, and the protocol's
 * own error body. Every route is served the same way, straight on `node:http`.
 */
import type { ClawrlError } from '../../spec/clawrl-error.js';
import type { Principal } from '../api-key-authenticator.js';
import type { StreamSink } from '../write-turn-stream.js';

/** An authenticated request whose body has been read within the size limit. */
export interface ProtocolInput {
  body: string;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  principal: Principal;
  /** From the `/s/{sessionId}/v1` prefix. */
  pathSessionId: string | undefined;
  /** Aborted when the client goes away. */
  clientSignal: AbortSignal;
}

/**
 * What to answer: a JSON body, or an event stream whose writing records the turn. Errors before
 * either is decided are thrown (`ClawrlError`s carry their status).
 */
export type ProtocolReply =
  | { kind: 'json'; headers: Record<string, string>; body: unknown }
  | { kind: 'stream'; headers: Record<string, string>; write: (sink: StreamSink) => Promise<void> };

export interface ProtocolRoute {
  /** The route's metric label. */
  label: string;
  /** Matches the request path; group 1, when present, is the `/s/{sessionId}` prefix's id. */
  path: RegExp;
  /** The credential to authenticate, as an `Authorization` header value. */
  authorization(header: (name: string) => string | undefined): string | undefined;
  handle(input: ProtocolInput): Promise<ProtocolReply>;
  /** The protocol's error body; its HTTP status is the error's own. */
  errorBody(error: ClawrlError): unknown;
}

/** SSE response headers every streaming protocol sends, with the turn's `X-Clawrl-*` headers. */
export function eventStreamHeaders(turnHeaders: Record<string, string>): Record<string, string> {
  return { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...turnHeaders };
}
