/**
 * The dashboard in headless Chromium (Debian's `chromium`, driven by playwright-core) against the
 * real server with the built-in model, after real turns (the official openai client), feedback and
 * a training step. With UPDATE_DASHBOARD_SCREENSHOTS=1 it also writes the screenshots in docs/dashboard/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeExperimentResultFiles } from './testing/experiment-result-files.js';
import { repositoryRoot, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

const chromiumPath = '/usr/bin/chromium';
const adminKey = 'dashboard-admin-key';
const apiKey = 'dashboard-tenant-key';
/** A second tenant, whose session the first tenant's key must not see. */
const otherKey = 'dashboard-other-tenant-key';
const hint = 'Put the final answer in bold.';
/** What the rules judge keeps from a turn the user corrects (`--judge-rules`), so a judged turn carries a kept hint. */
const judgeHint = 'Give the result first, then one line of working.';
const judgeRules = {
  name: 'dashboard',
  rules: [{ when: [{ on: 'nextState', rule: { type: 'regex', pattern: '\\b(?:no|wrong)\\b', flags: 'i', expect: true } }], score: -1, hint: judgeHint }],
};
const screenshots = process.env.UPDATE_DASHBOARD_SCREENSHOTS === '1' ? path.join(repositoryRoot, 'docs', 'dashboard') : null;

let server: ClawrlServer;
let results: string;
let rulesFolder: string;
let profile: string;
let browser: BrowserContext;
let page: Page;
let sessionId: string;
let firstTurnId: string;
let secondTurnId: string;

interface TurnView {
  responseTokenIds: number[];
  judgement: { hint: string | null; votes: { kind: string; text: string }[] } | null;
}

interface Status {
  turns: { main: number };
  samples: { ready: number };
  trainSteps: number;
  policyVersion: number;
}

async function admin<Body>(route: string, method: 'GET' | 'POST' = 'GET'): Promise<Body> {
  const response = await fetch(`${server.url}${route}`, { method, headers: { authorization: `Bearer ${adminKey}` } });
  expect(response.status, `${method} ${route}: ${response.status === 200 ? "" : await response.clone().text()}`).toBe(200);
  return (await response.json()) as Body;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function capture(name: string): Promise<void> {
  if (screenshots === null) return;
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: path.join(screenshots, `${name}.png`) });
}

beforeAll(async () => {
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} is missing: install Debian's chromium (apt-get install -y chromium); .ci/run does.`);
  results = mkdtempSync(path.join(tmpdir(), 'clawrl-dashboard-results-'));
  writeExperimentResultFiles(results);
  rulesFolder = mkdtempSync(path.join(tmpdir(), 'clawrl-dashboard-rules-'));
  writeFileSync(path.join(rulesFolder, 'rules.json'), JSON.stringify(judgeRules));
  // `combine` asks the judge for hints, so the session page has hint answers to show.
  server = await startClawrlServer([
    '--judge', 'rules', '--judge-rules', path.join(rulesFolder, 'rules.json'), '--method', 'combine', '--train-every', '1000', '--max-tokens', '16',
    '--api-key', `tenant=${apiKey}`, '--api-key', `other=${otherKey}`, '--admin-key', adminKey, '--results-dir', results,
  ]);
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey, defaultHeaders: { 'x-session-id': 'dashboard-session' } });
  const turnIds: string[] = [];
  // One conversation, each request quoting the replies before it, so each turn's next state is linked and judged.
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
  for (const question of ['What is 2 + 3?', 'And 4 + 4?', 'No, that is wrong. What is 10 - 7?']) {
    messages.push({ role: 'user', content: question });
    const { data, response } = await client.chat.completions.create({ model: 'builtin:tiny', messages, temperature: 0.8 }).withResponse();
    const reply = data.choices[0]?.message;
    expect(reply?.role).toBe('assistant');
    messages.push({ role: 'assistant', content: reply?.content ?? '' });
    turnIds.push(response.headers.get('x-clawrl-turn-id') ?? '');
  }
  sessionId = 'dashboard-session';
  firstTurnId = turnIds[0] ?? '';
  secondTurnId = turnIds[1] ?? '';
  const feedback = await fetch(`${server.url}/v1/feedback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ turn_id: firstTurnId, thumbs: 'up', hint }),
  });
  expect(feedback.status).toBe(200);
  // The second turn's next state corrects the model: the judge scores it −1 with a kept hint. The
  // step trains on its sample and the feedback's (+1), so their advantages differ from zero.
  await until(async () => (await admin<TurnView>(`/admin/turns/${secondTurnId}`)).judgement?.hint === judgeHint, "the second turn's judgement");
  await until(async () => ((await admin<TurnView>(`/admin/turns/${firstTurnId}`)).judgement?.votes.length ?? 0) > 0, "the first turn's judgement");
  await until(async () => (await admin<Status>('/admin/status')).samples.ready >= 2, 'the feedback and judged samples');
  expect((await admin<{ kind: string }>('/admin/training/step', 'POST')).kind).toBe('trained');
  expect((await admin<Status>('/admin/status')).policyVersion).toBe(1);

  profile = mkdtempSync(path.join(tmpdir(), 'clawrl-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = browser.pages()[0] ?? (await browser.newPage());
  // Every request the page makes goes to clawrl itself.
  page.on('request', (request) => expect(request.url().startsWith(server.url) || request.url().startsWith('data:')).toBe(true));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  for (const folder of [results, rulesFolder, profile, server?.data]) if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

describe('the dashboard in a browser', () => {
  it('refuses a wrong admin key, then shows the overview with the turn count and charts', async () => {
    await page.goto(`${server.url}/`);
    await page.getByLabel('Admin or tenant key').fill('not-the-admin-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByTestId('login-error').textContent()).toContain('refused');
    await capture('login');
    await page.getByLabel('Admin or tenant key').fill(adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('turn-count').waitFor();
    expect(await page.getByTestId('turn-count').textContent()).toBe('3');
    expect(await page.getByTestId('served-version').textContent()).toBe('1');
    expect(await page.locator('figure[data-chart="Turns per minute"] canvas').count()).toBeGreaterThan(0);
    expect(await page.locator('figure.chart').count()).toBeGreaterThanOrEqual(6);
    await capture('overview');
  });

  it("shows a session's turns with their score, why (verdict texts, the kept hint, the feedback), and a turn's tokens", async () => {
    await page.goto(`${server.url}/#/sessions`);
    await page.getByPlaceholder('Session id prefix, tenant or user').fill('dashboard');
    await page.getByRole('link', { name: sessionId }).click();
    const first = page.locator(`li[data-turn-id="${firstTurnId}"]`);
    await first.waitFor();
    expect(await first.getByTestId('turn-score').textContent()).toContain('+1');
    expect(await first.getByTestId('turn-hint').textContent()).toBe(hint);
    expect(await first.textContent()).toContain('(from feedback)');
    expect(await page.locator('li.turn').count()).toBe(3);
    // The judged turn shows the judge's own words beside its score, and the hint it kept.
    const second = page.locator(`li[data-turn-id="${secondTurnId}"]`);
    const judged = await admin<TurnView>(`/admin/turns/${secondTurnId}`);
    const verdict = judged.judgement?.votes.find((vote) => vote.kind === 'verdict')?.text ?? '';
    expect(verdict).toContain('rule 0 matched');
    expect(await second.getByTestId('turn-votes').textContent()).toContain(verdict);
    expect(await second.getByTestId('turn-score').textContent()).toBe('-1');
    expect(await second.getByTestId('kept-hint').textContent()).toBe(`kept (longest): ${judgeHint}`);
    // The first turn's judge found no hint: the answer is shown as rejected, with the reason.
    expect(await first.getByTestId('hint-answers').textContent()).toContain('rejected: missing-hint');
    await capture('session');
    await first.getByRole('link', { name: 'turn 0' }).click();
    await page.getByTestId('response-tokens').waitFor();
    const turn = await admin<TurnView>(`/admin/turns/${firstTurnId}`);
    expect(await page.locator('[data-testid="response-tokens"] .token').count()).toBe(turn.responseTokenIds.length);
    await capture('turn');
  });

  it('activates version 0 from the policies page after a confirmation', async () => {
    await page.goto(`${server.url}/#/policies`);
    const base = page.locator('li[data-version="0"]');
    await expect.poll(() => base.getByTestId('policy-state').textContent()).toBe('retired');
    await base.getByRole('button', { name: 'Activate…' }).click();
    await capture('policies');
    await base.getByRole('button', { name: 'Confirm activation' }).click();
    await expect.poll(() => page.getByTestId('policy-message').textContent()).toContain('Serving version 0');
    expect((await admin<Status>('/admin/status')).policyVersion).toBe(0);
    await expect.poll(() => page.getByTestId('active-version').textContent()).toBe('0');
    // The version it replaced went back in time: rolled back, with the reason.
    const trained = page.locator('li[data-version="1"]');
    await expect.poll(() => trained.getByTestId('policy-state').textContent()).toBe('rolled-back');
    expect(await trained.getByTestId('policy-state-reason').textContent()).toBe('rolled back to version 0');
    expect(await base.getByTestId('policy-state-reason').textContent()).toBe('activated by a person');
  });

  it('charts the personalize and rollout results under --results-dir', async () => {
    await page.goto(`${server.url}/#/experiments`);
    await page.locator('figure.chart').first().waitFor();
    const titles = await page.locator('figure.chart figcaption').allTextContents();
    expect(titles).toEqual([
      'Personalization: probe satisfaction by session (personalize)',
      'Rollout: mean reward by step (rollout)',
      'Rollout: held-out accuracy by step (rollout)',
    ]);
    await capture('experiments');
  });

  it("shows an agent's turn with the user's message first and its long system prompt folded", async () => {
    const system = `You are a personal assistant running inside an agent.\n${'## Tool rules\nCall tools only when needed.\n'.repeat(900)}`;
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey, defaultHeaders: { 'x-session-id': 'agent-session' } });
    await client.chat.completions.create({ model: 'builtin:tiny', messages: [{ role: 'system', content: system }, { role: 'user', content: 'What is 2 + 3?' }] });
    await page.goto(`${server.url}/#/sessions/agent-session`);
    const turn = page.locator('li.turn').first();
    await turn.waitFor();
    expect(await turn.locator('.message.user').textContent()).toBe('What is 2 + 3?');
    const fold = turn.getByTestId('system-prompt');
    expect(await fold.locator('summary').textContent()).toBe(`System prompt (${system.length.toLocaleString('en')} characters)`);
    // The user's message comes before the fold, and the fold starts closed: the prompt is not on the page until opened.
    expect(await turn.locator('.message.user + details[data-testid="system-prompt"]').count()).toBe(1);
    expect(await fold.getAttribute('open')).toBeNull();
    expect(await fold.locator('.message.system').isVisible()).toBe(false);
    await fold.locator('summary').click();
    expect(await fold.locator('.message.system').isVisible()).toBe(true);
    expect(await fold.locator('.message.system').textContent()).toBe(system);
  });

  it("signed in with a tenant's key, shows that tenant's counts and sessions, not another tenant's, and says which pages need the admin key", async () => {
    const other = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: otherKey, defaultHeaders: { 'x-session-id': 'other-tenant-session' } });
    await other.chat.completions.create({ model: 'builtin:tiny', messages: [{ role: 'user', content: 'What is 1 + 1?' }] });
    // The admin key sees the other tenant's session, so its absence below is the tenant's scope.
    expect((await admin<{ data: { id: string }[] }>('/admin/sessions')).data.map((session) => session.id)).toContain('other-tenant-session');
    await page.goto(`${server.url}/#/overview`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin or tenant key').fill(apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('tenant-scope').waitFor();
    expect(await page.getByTestId('signed-in-tenant').textContent()).toBe('tenant tenant');
    // dashboard-session's three turns and agent-session's one; not the other tenant's turn.
    expect(await page.getByTestId('turn-count').textContent()).toBe('4');
    expect(await page.getByTestId('session-count').textContent()).toBe('2');
    expect(await page.locator('figure.chart').count()).toBe(0);
    expect(await page.locator('p.error').count()).toBe(0);
    expect(await page.locator('nav a').allTextContents()).toEqual(['Overview', 'Sessions', 'Users']);
    await capture('tenant-overview');

    await page.goto(`${server.url}/#/sessions`);
    await page.getByRole('link', { name: sessionId }).waitFor();
    const listed = await page.locator('table.list a').allTextContents();
    expect(listed).toContain('agent-session');
    expect(listed).not.toContain('other-tenant-session');
    await page.getByRole('link', { name: sessionId }).click();
    await page.locator(`li[data-turn-id="${firstTurnId}"]`).waitFor();
    expect(await page.locator('li.turn').count()).toBe(3);

    // Another tenant's session is as unknown as a missing one; the admin pages say what they need, and the tab stays signed in.
    await page.goto(`${server.url}/#/sessions/other-tenant-session`);
    await expect.poll(() => page.locator('main').textContent()).toContain("No session with id 'other-tenant-session'");
    for (const route of ['policies', 'experiments']) {
      await page.goto(`${server.url}/#/${route}`);
      await expect.poll(() => page.getByTestId('needs-admin-key').textContent(), { message: route }).toContain('needs the admin key');
    }
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
  });
});
