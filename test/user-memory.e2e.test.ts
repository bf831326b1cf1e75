/**
 * Each user's memory through the real server in front of an untrainable OpenAI-compatible upstream
 * (`--engine openai`, the fake server in plain mode): the user's feedback (its text, and a hint)
 * reaches that user's next prompt, and no other user's; the dashboard's Users page shows the memory
 * and edits it in headless Chromium; erasing the tenant erases it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryMarker } from '../src/core/user-memory-context.js';
import { startFakeVllmServer, type FakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import type { UserMemoryResponse } from '../src/gateway/admin/dashboard-api.js';
import { startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

const chromiumPath = '/usr/bin/chromium';
const keys = { alice: 'alice-key-12345', bob: 'bob-key-1234567', other: 'other-key-12345', admin: 'memory-admin-key' };
const feedbackHint = 'Give the result first, then one line of working.';
const feedbackText = 'Please answer in one short line.';
const system = 'You are a tutor.';

let upstream: FakeVllmServer;
let server: ClawrlServer;
let profile: string | undefined;
let browser: BrowserContext | undefined;

const clientOf = (key: string, sessionId: string) => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, defaultHeaders: { 'x-session-id': sessionId } });

/** The system prompt the upstream got for the latest chat request. */
function lastUpstreamSystemPrompt(): string | undefined {
  const chats = upstream.requests.filter((request) => request.path === '/v1/chat/completions');
  const body = chats.at(-1)?.body as { messages: { role: string; content: string }[] } | undefined;
  return body?.messages.find((message) => message.role === 'system')?.content;
}

async function ask(key: string, sessionId: string, question: string): Promise<string | undefined> {
  await clientOf(key, sessionId).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'system', content: system }, { role: 'user', content: question }] });
  return lastUpstreamSystemPrompt();
}

async function memoryOf(user: string, key = keys.admin): Promise<UserMemoryResponse> {
  const response = await fetch(`${server.url}/admin/users/${encodeURIComponent(user)}/memory`, { headers: { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as UserMemoryResponse;
}

async function feedback(body: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${server.url}/v1/feedback`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys.alice}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
}

beforeAll(async () => {
  upstream = await startFakeVllmServer({ mode: 'plain', model: 'gpt-test' });
  server = await startClawrlServer([
    '--engine', 'openai', '--upstream', upstream.url, '--model', 'gpt-test', '--no-train',
    '--judge', 'rules',
    '--user-memory', 'context',
    '--api-key', `team/alice=${keys.alice}`, '--api-key', `team/bob=${keys.bob}`, '--api-key', `other=${keys.other}`, '--admin-key', keys.admin,
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await upstream?.close();
  for (const folder of [profile, server?.data]) if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

describe('per-user memory with --engine openai', () => {
  it("brings the user's feedback into that user's next prompt, and no one else's", async () => {
    const alice = clientOf(keys.alice, 'alice-first');
    const question = { role: 'user' as const, content: 'What is 2 + 3?' };
    const { data, response } = await alice.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'system', content: system }, question] }).withResponse();
    expect(lastUpstreamSystemPrompt()).toBe(system);
    const firstTurn = response.headers.get('x-clawrl-turn-id');
    await feedback({ turn_id: firstTurn, thumbs: 'down', text: feedbackText });
    // The session goes on: the next request is served with the memory the feedback made.
    const second = await alice.chat.completions
      .create({ model: 'gpt-test', messages: [{ role: 'system', content: system }, question, { role: 'assistant', content: data.choices[0]?.message.content ?? '' }, { role: 'user', content: 'What is 10 - 7?' }] })
      .withResponse();
    expect(second.response.headers.get('x-clawrl-session-id')).toBe('alice-first');
    expect(lastUpstreamSystemPrompt()).toBe(`${system}\n\n${memoryMarker}\n- ${feedbackText}`);
    await feedback({ turn_id: second.response.headers.get('x-clawrl-turn-id'), score: 1, hint: feedbackHint });
    const memory = await memoryOf('team/alice', keys.alice);
    expect(memory.data.map((entry) => [entry.kind, entry.text, entry.sourceTurnId])).toEqual([
      ['feedback', feedbackText, firstTurn],
      ['hint', feedbackHint, second.response.headers.get('x-clawrl-turn-id')],
    ]);

    const prompt = await ask(keys.alice, 'alice-next', 'What is 6 * 7?');
    expect(prompt?.startsWith(`${system}\n\n${memoryMarker}\n`)).toBe(true);
    expect(prompt).toContain(`- ${feedbackHint}`);
    expect(prompt).toContain(`- ${feedbackText}`);
    expect(await ask(keys.bob, 'bob-first', 'What is 6 * 7?')).toBe(system);
    // Another tenant's key cannot read it (a key of Alice's tenant can: tenants see their own users).
    expect((await fetch(`${server.url}/admin/users/team%2Falice/memory`, { headers: { authorization: `Bearer ${keys.other}` } })).status).toBe(404);
  });

  it("shows and edits a user's memory on the dashboard, and the next prompt follows the edit", async () => {
    profile = mkdtempSync(path.join(tmpdir(), 'clawrl-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const page: Page = browser.pages()[0] ?? (await browser.newPage());
    await page.goto(`${server.url}/`);
    await page.getByLabel('Admin or tenant key').fill(keys.admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Users' }).click();
    const aliceRow = page.locator('tr[data-user="team/alice"]');
    await aliceRow.waitFor();
    expect(await aliceRow.locator('td').nth(4).textContent()).toBe('2');
    await page.getByRole('link', { name: 'team/alice' }).click();
    const entries = page.getByTestId('memory-entries').locator('li');
    await expect.poll(() => entries.count()).toBe(2);
    expect(await page.getByTestId('memory-mode').textContent()).toContain('--user-memory context');

    // Found by id: while it is edited, its text is in the input, not in the item's text.
    const feedbackId = await page.locator('li.memory-entry', { hasText: feedbackText }).getAttribute('data-entry-id');
    const feedbackEntry = page.locator(`li.memory-entry[data-entry-id="${feedbackId}"]`);
    await feedbackEntry.getByRole('button', { name: 'Edit' }).click();
    await feedbackEntry.getByLabel('Entry text').fill('Answer in one line, in French.');
    await feedbackEntry.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByTestId('memory-message').textContent()).toBe('Entry saved.');
    await page.getByLabel('New note').fill('Prefers metric units.');
    await page.getByRole('button', { name: 'Add note' }).click();
    await expect.poll(() => entries.count()).toBe(3);
    await page.locator('li.memory-entry', { hasText: feedbackHint }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.getByTestId('memory-text').allTextContents()).toEqual(['Answer in one line, in French.', 'Prefers metric units.']);

    const prompt = await ask(keys.alice, 'alice-after-edit', 'What is 1 + 1?');
    expect(prompt).toBe(`${system}\n\n${memoryMarker}\n- Answer in one line, in French.\n- Prefers metric units.`);
  });

  it("erases the memory with its tenant's data, and the user's prompts go back to what they sent", async () => {
    const response = await fetch(`${server.url}/admin/erasures`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant: "team" }),
    });
    expect(response.status).toBe(200);
    const receipt = (await response.json()) as { erased: { memoryEntries: number } };
    expect(receipt.erased.memoryEntries).toBe(2);
    expect((await memoryOf('team/alice')).data).toEqual([]);
    expect(await ask(keys.alice, 'alice-after-erasure', 'What is 1 + 1?')).toBe(system);
  });
});
