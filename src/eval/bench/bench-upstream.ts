/**
 * A fast upstream for gateway benchmarks: answers vLLM-shaped chat completions (with
 * `prompt_token_ids`, `token_ids` and log-probs) instantly, so that what a benchmark measures is
 * the proxy in front of it, not a model. Not a test double of vLLM's behaviour; only its shapes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const replyWords = ['The', ' answer', ' is', ' 42', '.', ' Happy', ' to', ' help', ' further', '!'];

/**
 * Answers with `n` choices (the policy judge asks for all votes of a prompt in one request of n
 * choices, as vLLM serves them); a reply of one choice to such a request would make every judging
 * fail and retry instead of doing its work.
 */
function completion(body: { stream?: boolean; n?: number }, promptTokens: number): { json?: string; chunks?: string[] } {
  const id = `chatcmpl-bench-${Math.random().toString(36).slice(2)}`;
  const created = Math.floor(Date.now() / 1000);
  const choiceCount = Number.isInteger(body.n) && (body.n ?? 1) > 1 ? (body.n ?? 1) : 1;
  const choiceIndexes = Array.from({ length: choiceCount }, (_, index) => index);
  const promptTokenIds = Array.from({ length: Math.min(promptTokens, 16384) }, (_, index) => (index * 7919) % 32000);
  const tokenIds = replyWords.map((_, index) => 1000 + index);
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
          message: { role: 'assistant', content: replyWords.join(''), tool_calls: [] },
          token_ids: tokenIds,
          logprobs: { content: replyWords.map((token) => ({ token, logprob: -0.5, bytes: [], top_logprobs: [] })) },
          finish_reason: 'stop',
          stop_reason: null,
        })),
        usage,
      }),
    };
  }
  const chunk = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: 'bench-model', choices: [choice], ...extra })}\n\n`;
  const chunks = choiceIndexes.map((index) =>
    chunk({ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }, index === 0 ? { prompt_token_ids: promptTokenIds } : {}),
  );
  replyWords.forEach((token, position) => {
    for (const index of choiceIndexes) {
      chunks.push(
        chunk({
          index,
          delta: { content: token },
          token_ids: [tokenIds[position]],
          logprobs: { content: [{ token, logprob: -0.5, bytes: [], top_logprobs: [] }] },
          finish_reason: position === replyWords.length - 1 ? 'stop' : null,
        }),
      );
    }
  });
  chunks.push(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: 'bench-model', choices: [], usage })}\n\n`);
  chunks.push('data: [DONE]\n\n');
  return { chunks };
}

export function startBenchUpstream(port = 0): Promise<{ server: Server; url: string }> {
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
      let body: { stream?: boolean; n?: number };
      try {
        body = JSON.parse(text) as { stream?: boolean; n?: number };
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end('{"error":{"message":"bad json"}}');
        return;
      }
      // Roughly four characters per token, as for English text.
      const result = completion(body, Math.ceil(text.length / 4));
      if (result.json !== undefined) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(result.json);
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of result.chunks ?? []) response.write(chunk);
      response.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}
