/**
 * The README's examples, copied as they are, against what `npm start` serves (`clawrl serve` with its
 * defaults). The only change made to a snippet is the address: the README names 127.0.0.1:8400, the test's
 * server listens on a free port. A README edit that breaks an example fails here.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConversation } from '../src/lab/bench/agent-request-shapes.js';
import { repositoryRoot, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

const run = promisify(execFile);
const readme = readFileSync(path.join(repositoryRoot, 'README.md'), 'utf8');
const readmeAddress = 'http://127.0.0.1:8400';

/** The README's fenced blocks of one language, in order. */
function blocks(language: string): string[] {
  return [...readme.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1] ?? '');
}

function block(language: string, mentioning: string): string {
  const found = blocks(language).find((text) => text.includes(mentioning));
  if (found === undefined) throw new Error(`README has no \`\`\`${language} block mentioning ${mentioning}`);
  return found;
}

let server: ClawrlServer;
let local: (snippet: string) => string;

beforeAll(async () => {
  server = await startClawrlServer([]);
  local = (snippet) => snippet.replaceAll(readmeAddress, server.url);
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

describe('the README examples', () => {
  it('names the server address the examples use', () => {
    expect(readme).toContain(`${readmeAddress}/v1`);
  });

  it('the OpenAI SDK snippet gets a reply', async () => {
    const snippet = local(block('js', "from 'openai'"));
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', snippet], { cwd: repositoryRoot, timeout: 60_000 });
    expect(stdout.trim().length).toBeGreaterThan(0);
  }, 90_000);

  it("the OpenClaw entry names a served model, and a request shaped as OpenClaw's gets a reply", async () => {
    const entry = JSON.parse(local(block('json', '"providers"'))) as {
      models: { providers: Record<string, { baseUrl: string; apiKey: string; models: Array<{ id: string; maxTokens: number }> }> };
      agents: { defaults: { model: { primary: string } } };
    };
    const [providerName, provider] = Object.entries(entry.models.providers)[0] ?? [];
    if (!provider || !providerName) throw new Error('the OpenClaw entry has no provider');
    const model = provider.models[0];
    if (!model) throw new Error('the OpenClaw provider lists no model');
    expect(entry.agents.defaults.model.primary).toBe(`${providerName}/${model.id}`);

    const listed = (await (await fetch(`${provider.baseUrl}/models`)).json()) as { data: Array<{ id: string }> };
    expect(listed.data.map((served) => served.id)).toContain(model.id);

    // As a real OpenClaw does: streamed, content parts, max_completion_tokens.
    const response = await fetch(`${provider.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${provider.apiKey}` },
      body: JSON.stringify({
        model: model.id,
        stream: true,
        max_completion_tokens: 32,
        messages: [
          { role: 'system', content: 'You are a helpful assistant.' },
          { role: 'user', content: [{ type: 'text', text: 'What is 2 + 3?' }] },
        ],
      }),
    });
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).toContain('"content"');
    expect(body.trim().endsWith('data: [DONE]')).toBe(true);
  }, 60_000);

  it("an agent's full-sized request (OpenClaw's ~11k tokens of system prompt and tools) gets a reply, its turn recording the fitted prompt the model saw", async () => {
    const conversation = createConversation('agent', 'readme');
    const body = JSON.parse(conversation.next(false)) as Record<string, unknown>;
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model: 'builtin:tiny', max_completion_tokens: 16 }),
    });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as { usage: { prompt_tokens: number } };
    expect(completion.usage.prompt_tokens).toBeLessThanOrEqual(512);
    const turnId = response.headers.get('x-clawrl-turn-id');
    const turn = (await (await fetch(`${server.url}/admin/turns/${turnId}`)).json()) as { promptTokenIds: number[]; responseTokenIds: number[]; logprobs: number[] };
    expect(turn.promptTokenIds).toHaveLength(completion.usage.prompt_tokens);
    expect(turn.logprobs).toHaveLength(turn.responseTokenIds.length);
    expect(turn.responseTokenIds.length).toBeGreaterThan(0);
  }, 60_000);

  it('the feedback example scores a turn', async () => {
    const { stdout } = await run('bash', ['-c', local(block('sh', '/v1/feedback'))], { cwd: repositoryRoot, timeout: 60_000 });
    const feedback = JSON.parse(stdout) as { turn_id: string; score: number; queued: boolean };
    expect(feedback.turn_id).toMatch(/^turn_/);
    expect(feedback.score).toBe(-1);
  }, 90_000);

  it('the training and rollback commands run', async () => {
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', local(block('sh', 'policy list'))], {
      cwd: repositoryRoot,
      timeout: 90_000,
      env: { ...process.env, CLAWRL_URL: server.url },
    });
    expect(stdout).toContain('serving policy version 0');
    expect(stdout).toMatch(/"paused":\s*true|paused/);
  }, 120_000);
});
