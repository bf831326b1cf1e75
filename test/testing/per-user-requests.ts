/**
 * Requests of users to a `clawrl serve --policy-scope user` server, each under its API key: a chat
 * turn (with the version that served it), feedback that makes samples, and one training step.
 */
import { expect } from 'vitest';
import type { ClawrlServer } from './start-clawrl-server.js';
import { pollUntil } from './poll-until.js';

export interface PerUserServer {
  server: ClawrlServer;
  adminKey: string;
  model: string;
  /** Of every chat turn; default 0.8 (Tinker trains only turns sampled at 1). */
  temperature?: number;
}

export async function adminRequest<Body>({ server, adminKey }: PerUserServer, route: string, method: 'GET' | 'POST' = 'GET'): Promise<Body> {
  const response = await fetch(`${server.url}${route}`, { method, headers: { authorization: `Bearer ${adminKey}` } });
  expect(response.status, `${method} ${route}: ${response.status === 200 ? '' : await response.clone().text()}`).toBe(200);
  return (await response.json()) as Body;
}

/** One chat turn under `apiKey`; the status, the turn and the version that served it. */
export async function chatAs(target: PerUserServer, apiKey: string, sessionId: string, content: string, headers: Record<string, string> = {}): Promise<{ status: number; turnId: string; version: string | null }> {
  const response = await fetch(`${target.server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'x-session-id': sessionId, ...headers },
    body: JSON.stringify({ model: target.model, messages: [{ role: 'user', content }], temperature: target.temperature ?? 0.8 }),
  });
  await response.text();
  return { status: response.status, turnId: response.headers.get('x-clawrl-turn-id') ?? '', version: response.headers.get('x-clawrl-policy-version') };
}

/** Three one-turn sessions under `apiKey` with feedback, each served `expectedVersion`, until their samples are ready; then one step. */
export async function trainAs(target: PerUserServer, apiKey: string, prefix: string, expectedVersion: string): Promise<{ kind: string; step?: { policyVersion: number } }> {
  const ready = async () => (await adminRequest<{ samples: { ready: number } }>(target, '/admin/status')).samples.ready;
  const before = await ready();
  for (let index = 0; index < 3; index += 1) {
    const { status, turnId, version } = await chatAs(target, apiKey, `${prefix}-${index}`, `hello ${index}`);
    expect(status).toBe(200);
    expect(version).toBe(expectedVersion);
    const feedback = await fetch(`${target.server.url}/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ turn_id: turnId, thumbs: index % 2 === 0 ? 'up' : 'down' }),
    });
    expect(feedback.status).toBe(200);
  }
  await pollUntil(ready, (count) => count >= before + 3, `${prefix}'s samples`);
  return adminRequest(target, '/admin/training/step', 'POST');
}
