/**
 * A prompt longer than the built-in model's window, on every protocol: under `--prompt-overflow fit`
 * (the built-in model's default) the reply says it was fitted (`X-Clawrl-Prompt-Fitted:
 * <original>/<fitted>`, streaming too, and an info log line); under `--prompt-overflow error` it is
 * a 400 in the protocol's own error shape naming both sizes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

const long = Array.from({ length: 1500 }, (_, index) => `word${index}`).join(' ');

type Protocol = 'chat' | 'responses' | 'messages';
function request(url: string, protocol: Protocol, content: string, stream: boolean): Promise<Response> {
  const body =
    protocol === 'chat'
      ? { model: 'builtin:tiny', messages: [{ role: 'user', content }], max_tokens: 8, stream }
      : protocol === 'responses'
        ? { model: 'builtin:tiny', input: content, max_output_tokens: 8, stream }
        : { model: 'builtin:tiny', messages: [{ role: 'user', content }], max_tokens: 8, stream };
  const route = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' }[protocol];
  return fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

let fitting: ClawrlServer;
let refusing: ClawrlServer;
beforeAll(async () => {
  [fitting, refusing] = await Promise.all([startClawrlServer(['--no-train', '--judge', 'rules']), startClawrlServer(['--no-train', '--judge', 'rules', '--prompt-overflow', 'error'])]);
});
afterAll(async () => {
  await Promise.all([fitting?.stop(), refusing?.stop()]);
});

const cases = (['chat', 'responses', 'messages'] as const).flatMap((protocol) => [false, true].map((stream) => ({ protocol, stream })));

describe('a prompt over the window', () => {
  it.each(cases)('is fitted and says so: $protocol, stream $stream', async ({ protocol, stream }) => {
    const response = await request(fitting.url, protocol, long, stream);
    expect(response.status).toBe(200);
    const header = response.headers.get('x-clawrl-prompt-fitted');
    const [original, fitted] = (header ?? '').split('/').map(Number);
    expect(original, String(header)).toBeGreaterThan(1024);
    expect(fitted, String(header)).toBeLessThanOrEqual(512);
    await response.text();
    const turn = (await (await fetch(`${fitting.url}/admin/turns/${response.headers.get('x-clawrl-turn-id')}`)).json()) as { promptTokenIds: number[] };
    expect(turn.promptTokenIds.length).toBe(fitted);
    expect(fitting.stderr()).toContain(`info prompt fitted to the model window turnId=${response.headers.get('x-clawrl-turn-id')} originalTokens=${original} fittedTokens=${fitted}\n`);

    const short = await request(fitting.url, protocol, 'What is 2 + 3?', stream);
    expect(short.headers.get('x-clawrl-prompt-fitted')).toBeNull();
    await short.text();
  });

  it.each(cases)('is refused with --prompt-overflow error, naming both sizes: $protocol, stream $stream', async ({ protocol, stream }) => {
    const response = await request(refusing.url, protocol, long, stream);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { type?: string; error: { type: string; code?: string; message: string } };
    const sizes = /maximum context length is (\d+) tokens, but the messages take (\d+) tokens/.exec(body.error.message);
    expect(Number(sizes?.[1]), body.error.message).toBe(1024);
    expect(Number(sizes?.[2]), body.error.message).toBeGreaterThan(1024);
    if (protocol === 'messages') expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    else expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded' });
  });
});
