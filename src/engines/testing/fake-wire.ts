/**
 * Lenient readers of wire request bodies and the shared response pieces of the fake server.
 * The fake answers whatever a client sends, like a real server that ignores unknown fields.
 */
import { fakeTopAlternatives, tokenBytes, tokenText, type FakeSampledToken, type FakeTurn } from './fake-model.js';

export type FakeBody = Record<string, unknown>;

/** What a route answers: a JSON body, a text body, or SSE payloads written one by one. */
export type FakeResponse =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'text'; status: number; body: string }
  | { kind: 'stream'; chunks: unknown[] };

export function asRecord(value: unknown): FakeBody {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as FakeBody) : {};
}

export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function stopStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return asArray(value).filter((item): item is string => typeof item === 'string');
}

/** vLLM's error body (`ErrorResponse`). */
export function errorResponse(status: number, message: string, type: string, param: string | null = null): FakeResponse {
  return { kind: 'json', status, body: { error: { message, type, param, code: status } } };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => asString(asRecord(part)['text']) ?? '')
    .join('');
}

/** OpenAI wire messages to the fake model's turns. */
export function wireMessagesToTurns(messages: unknown[]): FakeTurn[] {
  return messages.map((message) => {
    const record = asRecord(message);
    const toolCalls = asArray(record['tool_calls']).map((call) => {
      const wireFunction = asRecord(asRecord(call)['function']);
      return { name: asString(wireFunction['name']) ?? '', arguments: asString(wireFunction['arguments']) ?? '' };
    });
    return { role: asString(record['role']) ?? 'user', content: contentText(record['content']), toolCalls };
  });
}

export function wireToolNames(tools: unknown): string[] {
  return asArray(tools)
    .map((tool) => asString(asRecord(asRecord(tool)['function'])['name']))
    .filter((name): name is string => name !== undefined);
}

export function lastUserText(turns: FakeTurn[]): string {
  return [...turns].reverse().find((turn) => turn.role === 'user')?.content ?? '';
}

/** One `logprobs.content[]` entry of OpenAI chat, with `top_logprobs` alternatives. */
export function chatLogprobEntry(previousId: number, token: FakeSampledToken, topCount: number): unknown {
  const top = topCount > 0 ? fakeTopAlternatives(previousId, token.id, topCount) : [];
  return {
    token: tokenText(token.id),
    logprob: token.logprob,
    bytes: Array.from(tokenBytes(token.id)),
    top_logprobs: top.map((alternative) => ({
      token: tokenText(alternative.id),
      logprob: alternative.logprob,
      bytes: Array.from(tokenBytes(alternative.id)),
    })),
  };
}

/** The id each token was sampled after: the prompt's last id, then the previous token. */
export function previousIds(promptIds: readonly number[], tokens: readonly FakeSampledToken[]): number[] {
  return tokens.map((_, index) => (index === 0 ? (promptIds[promptIds.length - 1] ?? 0) : (tokens[index - 1]?.id ?? 0)));
}

/** Splits text into at most `count` non-empty pieces without cutting a code point. */
export function splitText(text: string, count: number): string[] {
  const codePoints = Array.from(text);
  const size = Math.max(1, Math.ceil(codePoints.length / Math.max(1, count)));
  const pieces: string[] = [];
  for (let start = 0; start < codePoints.length; start += size) pieces.push(codePoints.slice(start, start + size).join(''));
  return pieces;
}
