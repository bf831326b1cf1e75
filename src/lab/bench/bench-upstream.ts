/**
 * The upstream of gateway benchmarks: answers vLLM-shaped chat completions (with
 * `prompt_token_ids`, `token_ids` and log-probs). Instant by default, so that what a benchmark
 * measures is the proxy in front of it (the stress case); paced like a served model when asked,
 * with a time to first token and a time per output token, so that it measures what a user waits.
 * Not a test double of vLLM's behaviour; only its shapes and its timing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';

/** How the upstream answers in time. All zeros but `replyTokens` is the instant upstream. */
export interface UpstreamPacing {
  /** From the request's end to the first output token. */
  timeToFirstTokenMs: number;
  /** Between consecutive output tokens. */
  timePerOutputTokenMs: number;
  /** Tokens in each reply. */
  replyTokens: number;
}

export const instantPacing: UpstreamPacing = { timeToFirstTokenMs: 0, timePerOutputTokenMs: 0, replyTokens: 10 };

export const upstreamPacingSchema = z.object({
  timeToFirstTokenMs: z.number().min(0),
  timePerOutputTokenMs: z.number().min(0),
  replyTokens: z.number().int().min(1).max(4096),
});

/** The harness switches a running upstream's pacing here, so one warm gateway serves both cases. */
export const pacingPath = '/bench/pacing';

const replyWords = ['The', ' answer', ' is', ' 42', '.', ' Happy', ' to', ' help', ' further', '!'];

/** Waits `ms` milliseconds; injected so tests drive the pacing with a fake clock. */
export type Wait = (ms: number) => Promise<void>;

const realWait: Wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A streamed answer, in the groups the pacing separates: the first token, each later token, the end. */
export interface StreamedAnswer {
  /** One entry per output token position (with the role chunk in the first), then one for usage and `[DONE]`. */
  groups: string[][];
}

/**
 * Answers with `n` choices (the policy judge asks for all votes of a prompt in one request of n
 * choices, as vLLM serves them); a reply of one choice to such a request would make every judging
 * fail and retry instead of doing its work.
 */
export function completion(body: { stream?: boolean; n?: number }, promptTokens: number, replyTokens: number): { json?: string; stream?: StreamedAnswer } {
  const id = `chatcmpl-bench-${Math.random().toString(36).slice(2)}`;
  const created = Math.floor(Date.now() / 1000);
  const choiceCount = Number.isInteger(body.n) && (body.n ?? 1) > 1 ? (body.n ?? 1) : 1;
  const choiceIndexes = Array.from({ length: choiceCount }, (_, index) => index);
  const promptTokenIds = Array.from({ length: Math.min(promptTokens, 16384) }, (_, index) => (index * 7919) % 32000);
  const words = Array.from({ length: replyTokens }, (_, index) => replyWords[index % replyWords.length] ?? '');
  const tokenIds = words.map((_, index) => 1000 + (index % replyWords.length));
  const usage = { prompt_tokens: promptTokenIds.length, completion_tokens: tokenIds.length * choiceCount, total_tokens: promptTokenIds.length + tokenIds.length * choiceCount };
  if (body.stream !== true) {
    return {
      json: JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model: 'bench-model',
        prompt_token_ids: promptTokenIds,
        choices: choiceIndexes.map((index) => ({
          index,
          message: { role: 'assistant', content: words.join(''), tool_calls: [] },
          token_ids: tokenIds,
          logprobs: { content: words.map((token) => ({ token, logprob: -0.5, bytes: [], top_logprobs: [] })) },
          finish_reason: 'stop',
          stop_reason: null,
        })),
        usage,
      }),
    };
  }
  const chunk = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: 'bench-model', choices: [choice], ...extra })}\n\n`;
  const groups: string[][] = words.map((token, position) =>
    choiceIndexes.map((index) =>
      chunk({
        index,
        delta: { content: token },
        token_ids: [tokenIds[position]],
        logprobs: { content: [{ token, logprob: -0.5, bytes: [], top_logprobs: [] }] },
        finish_reason: position === words.length - 1 ? 'stop' : null,
      }),
    ),
  );
  groups[0]?.unshift(
    ...choiceIndexes.map((index) =>
      chunk({ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }, index === 0 ? { prompt_token_ids: promptTokenIds } : {}),
    ),
  );
  groups.push([`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: 'bench-model', choices: [], usage })}\n\n`, 'data: [DONE]\n\n']);
  return { stream: { groups } };
}

/**
 * Writes a streamed answer as a served model would: the first token after the time to first
 * token, each later one after the time per output token, usage and `[DONE]` with the last. The
 * instant upstream writes every group at once, without yielding to the event loop.
 */
export async function writePaced(answer: StreamedAnswer, pacing: UpstreamPacing, write: (chunk: string) => void, wait: Wait = realWait): Promise<void> {
  const last = answer.groups.length - 1;
  for (const [position, group] of answer.groups.entries()) {
    const delay = position === 0 ? pacing.timeToFirstTokenMs : position === last ? 0 : pacing.timePerOutputTokenMs;
    if (delay > 0) await wait(delay);
    for (const chunk of group) write(chunk);
  }
}

/** How long a non-streamed answer takes: the first token, then every later one. */
export function nonStreamedDelayMs(pacing: UpstreamPacing): number {
  return pacing.timeToFirstTokenMs + pacing.timePerOutputTokenMs * (pacing.replyTokens - 1);
}

export function startBenchUpstream(port = 0, wait: Wait = realWait): Promise<{ server: Server; url: string }> {
  let pacing = instantPacing;
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/v1/models') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ object: 'list', data: [{ id: 'bench-model', object: 'model' }] }));
      return;
    }
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end('{"error":{"message":"bad json"}}');
        return;
      }
      if (request.url === pacingPath) {
        const parsed = upstreamPacingSchema.safeParse(body);
        response.writeHead(parsed.success ? 204 : 400);
        if (parsed.success) pacing = parsed.data;
        response.end();
        return;
      }
      // Roughly four characters per token, as for English text.
      const result = completion(body as { stream?: boolean; n?: number }, Math.ceil(text.length / 4), pacing.replyTokens);
      if (result.json !== undefined) {
        const json = result.json;
        const answer = () => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(json);
        };
        const delay = nonStreamedDelayMs(pacing);
        if (delay > 0) void wait(delay).then(answer);
        else answer();
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      void writePaced(result.stream ?? { groups: [] }, pacing, (chunk) => response.write(chunk), wait).then(() => response.end());
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}

/** Switches a running bench upstream (in another process) to `pacing`. */
export async function setUpstreamPacing(upstreamUrl: string, pacing: UpstreamPacing): Promise<void> {
  const response = await fetch(new URL(pacingPath, upstreamUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pacing) });
  if (response.status !== 204) throw new ClawrlError('internal_error', `the bench upstream refused pacing ${JSON.stringify(pacing)}: HTTP ${response.status}`);
}
