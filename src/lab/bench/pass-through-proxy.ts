/**
 * The peer of the gateway benchmark: the barest useful proxy (read the body, forward it, pipe the
 * answer back), so the ratio isolates what clawrl adds: validation, session stitching, recording.
 */
import { Agent, createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export function startPassThroughProxy(upstreamUrl: string, port = 0): Promise<{ server: Server; url: string }> {
  const upstream = new URL(upstreamUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const server = createServer((incoming, outgoing) => {
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: { 'content-type': incoming.headers['content-type'] ?? 'application/json' },
        agent,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => {
      outgoing.writeHead(502);
      outgoing.end();
    });
    incoming.pipe(forwarded);
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}
