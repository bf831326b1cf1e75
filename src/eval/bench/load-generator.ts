/**
 * Closed-loop load: `concurrency` virtual users each send their next request as soon as the
 * previous one finished, over keep-alive connections, recording each request's full latency.
 */
import { Agent, request as httpRequest } from 'node:http';
import { createConversation, type RequestShape } from './agent-request-shapes.js';

export interface LoadResult {
  requests: number;
  errors: number;
  latenciesMs: number[];
  durationMs: number;
}

function extractReply(text: string, stream: boolean): string {
  if (!stream) {
    const body = JSON.parse(text) as { choices?: Array<{ message?: { content?: string } }> };
    return body.choices?.[0]?.message?.content ?? '';
  }
  let reply = '';
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const chunk = JSON.parse(line.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> };
    reply += chunk.choices?.[0]?.delta?.content ?? '';
  }
  return reply;
}

function send(agent: Agent, url: URL, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (incoming) => {
        const parts: Buffer[] = [];
        incoming.on('data', (part: Buffer) => parts.push(part));
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
        incoming.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

export async function runLoad(options: {
  baseUrl: string;
  shape: RequestShape;
  stream: boolean;
  concurrency: number;
  requests: number;
  /** Distinguishes conversations of different runs, so sessions never mix between runs. */
  runName: string;
}): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const url = new URL('/v1/chat/completions', options.baseUrl);
  const latenciesMs: number[] = [];
  let errors = 0;
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, worker) => {
      const conversation = createConversation(options.shape, `${options.runName}-user-${worker}`);
      while (issued < options.requests) {
        issued += 1;
        const body = conversation.next(options.stream);
        const begin = performance.now();
        try {
          const answer = await send(agent, url, body);
          latenciesMs.push(performance.now() - begin);
          if (answer.status !== 200) errors += 1;
          else conversation.reply(extractReply(answer.text, options.stream));
        } catch {
          errors += 1;
        }
      }
    }),
  );
  agent.destroy();
  return { requests: latenciesMs.length, errors, latenciesMs, durationMs: performance.now() - started };
}

export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}
