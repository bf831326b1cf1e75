/**
 * The gateway's `node:http` request listener. The protocol routes (chat completions, Responses,
 * Messages), nearly all of the traffic, are answered from one table straight on the
 * `ServerResponse`, not through Hono's fetch adapter (a web `Request`, a `Response` and an SSE
 * `ReadableStream` per request). Every other route falls through to the Hono app, whose order of
 * checks this path keeps: authentication (401), body limit (413), then the route.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { ClawrlError } from '../spec/clawrl-error.js';
import { createChatCompletionsRoute } from './protocols/chat-completions/chat-completions-route.js';
import { createGatewayApp } from './create-gateway-app.js';
import { asClawrlError } from './error-response.js';
import type { GatewayContext } from './gateway-context.js';
import { createMessagesRoutes } from './protocols/messages/messages-route.js';
import type { ProtocolRoute } from './protocols/protocol-route.js';
import { createResponsesRoute } from './protocols/responses/responses-route.js';
import { createTurnRecorder } from './turn-recorder.js';

export type GatewayRequestListener = (request: IncomingMessage, response: ServerResponse) => void;

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  // Absolute-form request targets (`POST http://host/v1/...`) are legal, if rare.
  if (!url.startsWith('/')) return URL.canParse(url) ? new URL(url).pathname : url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function decodedSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The body as text, refused with 413 once it passes the limit (declared or counted). */
function readBody(request: IncomingMessage, limitBytes: number): Promise<string> {
  const tooLarge = () => new ClawrlError('request_too_large', `The request body exceeds the limit of ${limitBytes} bytes.`);
  if (Number(request.headers['content-length']) > limitBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limitBytes) {
        chunks.push(chunk);
        return;
      }
      // Keep reading and discarding, so the 413 can be answered on a keep-alive connection.
      request.off('data', onData);
      request.resume();
      reject(tooLarge());
    };
    request.on('data', onData);
    request.once('end', () => {
      const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)).toString('utf8');
      // As `TextDecoder` (and so Hono) would, drop a byte-order mark that JSON.parse would reject.
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    });
    request.once('error', reject);
    request.once('close', () => {
      if (!request.complete) reject(new ClawrlError('invalid_request', 'client disconnected'));
    });
  });
}

/** Writes SSE text; when the socket buffer is full, the promise says when to write more. */
function writeText(response: ServerResponse, text: string): Promise<void> | undefined {
  if (response.write(text) || response.destroyed) return undefined;
  return new Promise((resolve) => {
    const resume = () => {
      response.off('drain', resume);
      response.off('close', resume);
      resolve();
    };
    response.on('drain', resume);
    response.on('close', resume);
  });
}

export function createGatewayRequestListener(context: GatewayContext, app = createGatewayApp(context)): GatewayRequestListener {
  const fallThrough = getRequestListener(app.fetch);
  const recorder = createTurnRecorder(context);
  // Chat completions first: they are most of the traffic.
  const routes: readonly ProtocolRoute[] = [
    createChatCompletionsRoute(context, recorder),
    createResponsesRoute(context, recorder),
    ...createMessagesRoutes(context, recorder),
  ];

  function sendJson(route: ProtocolRoute, response: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
    response.end(text);
    context.metrics.requests.inc({ route: route.label, status: String(status) });
  }

  async function serve(route: ProtocolRoute, request: IncomingMessage, response: ServerResponse, pathSessionId: string | undefined): Promise<void> {
    try {
      const header = (name: string) => headerOf(request, name);
      const trustedUserHeader = context.authenticator.trustedUserHeader;
      const principal = context.authenticator.authenticate(route.authorization(header), trustedUserHeader === undefined ? undefined : header(trustedUserHeader));
      const body = await readBody(request, context.limits.bodyLimitBytes);
      const clientGone = new AbortController();
      response.once('close', () => {
        if (!response.writableFinished) clientGone.abort(new ClawrlError('invalid_request', 'client disconnected'));
      });
      const reply = await route.handle({ body, header, principal, pathSessionId, clientSignal: clientGone.signal });
      if (reply.kind === 'json') {
        sendJson(route, response, 200, reply.body, reply.headers);
        return;
      }
      try {
        response.writeHead(200, reply.headers);
      } catch (error) {
        // A header Node refuses (a session id with a line break): stop the generation and record
        // it, as if the client had gone, so neither the engine nor the key's slot is left running.
        clientGone.abort(error);
        await reply.write(() => undefined);
        throw error;
      }
      context.metrics.requests.inc({ route: route.label, status: '200' });
      await reply.write((text) => writeText(response, text));
      response.end();
    } catch (error) {
      const clawrlError = asClawrlError(error, context.logger);
      if (!response.headersSent) {
        sendJson(route, response, clawrlError.status, route.errorBody(clawrlError));
        return;
      }
      // Mid-stream failures are reported in the stream itself; this is a bug, so cut the response short.
      response.destroy();
    }
  }

  return (request, response) => {
    // Through Hono the gateway's CPU per turn was 11-17% higher, agent-shaped and small (bench gateway, 2026-12-06).
    if (request.method === 'POST') {
      const path = pathOf(request.url);
      for (const route of routes) {
        const match = route.path.exec(path);
        if (match === null) continue;
        void serve(route, request, response, match[1] === undefined ? undefined : decodedSegment(match[1]));
        return;
      }
    }
    void fallThrough(request, response);
  };
}
