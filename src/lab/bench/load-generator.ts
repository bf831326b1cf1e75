/**
 * Closed-loop load: `concurrency` virtual users each send their next request as soon as the
 * previous one finished, over keep-alive connections, recording each request's full latency and,
 * when streaming, when its first and last content arrived.
 */
import { Agent, request as httpRequest } from 'node:http';
import { createConversation, type RequestShape } from './agent-request-shapes.js';

export interface LoadResult {
  requests: number;
  errors: number;
  latenciesMs: number[];
  /** Streaming only: from sending the request to its first non-empty content delta. */
  timesToFirstTokenMs: number[];
  /** Streaming only, for replies of two tokens or more: content deltas after the first, per second after the first. */
  tokensPerSecondPerStream: number[];
  durationMs: number;
}

interface StreamTiming {
  firstContentMs?: number;
  lastContentMs?: number;
  contentDeltas: number;
}

function extractReply(text: string, stream: boolean): string {
  if (!stream) {
    const body = JSON.parse(text) as { choices?: Array<{ message?: { content?: string } }> };
    return body.choices?.[0]?.message?.content ?? '';
  }
  let reply = '';
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    reply += contentOf(line);
  }
  return reply;
}

function contentOf(line: string): string {
  const chunk = JSON.parse(line.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> };
  return chunk.choices?.[0]?.delta?.content ?? '';
}

/** Notes when each complete `data:` line of a stream that carries content arrived. */
function streamTimer(begin: number): { onText(text: string): void; timing: StreamTiming } {
  const timing: StreamTiming = { contentDeltas: 0 };
  let pending = '';
  return {
    timing,
    onText(text) {
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('data: ') || line === 'data: [DONE]' || contentOf(line) === '') continue;
        const at = performance.now() - begin;
        timing.firstContentMs ??= at;
        timing.lastContentMs = at;
        timing.contentDeltas += 1;
      }
    },
  };
}

function send(agent: Agent, url: URL, body: string, onText?: (text: string) => void): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (incoming) => {
        const parts: Buffer[] = [];
        incoming.on('data', (part: Buffer) => {
          parts.push(part);
          onText?.(part.toString('utf8'));
        });
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
  const timesToFirstTokenMs: number[] = [];
  const tokensPerSecondPerStream: number[] = [];
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
        // Streams are read line by line as they arrive only to time them; a whole answer is parsed once, after.
        const timer = options.stream ? streamTimer(begin) : undefined;
        try {
          const answer = await send(agent, url, body, timer?.onText);
          latenciesMs.push(performance.now() - begin);
          if (answer.status !== 200) errors += 1;
          else conversation.reply(extractReply(answer.text, options.stream));
          const timing = timer?.timing;
          if (answer.status === 200 && timing?.firstContentMs !== undefined) {
            timesToFirstTokenMs.push(timing.firstContentMs);
            const decodeMs = (timing.lastContentMs ?? timing.firstContentMs) - timing.firstContentMs;
            if (timing.contentDeltas >= 2 && decodeMs > 0) tokensPerSecondPerStream.push(((timing.contentDeltas - 1) / decodeMs) * 1000);
          }
        } catch {
          errors += 1;
        }
      }
    }),
  );
  agent.destroy();
  return { requests: latenciesMs.length, errors, latenciesMs, timesToFirstTokenMs, tokensPerSecondPerStream, durationMs: performance.now() - started };
}

export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}
