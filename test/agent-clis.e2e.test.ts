/**
 * The real agent CLIs against the real server, offline: each runs two turns of one session with no
 * session header, and the server must record both in one session, link the first turn's next
 * state to the second user message, and the client must exit 0 having printed the model's reply.
 * Each runs against what `npm start` serves (the built-in model, whose window is far smaller than
 * an agent's prompt) and against a vLLM-shaped upstream.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVllmServer, type FakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { agentEnvironment, installAgentClis, type AgentClis } from './testing/agent-clis.js';
import { repositoryRoot, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

/** Runs a CLI with its stdin closed, as a script would (Claude Code waits for piped input otherwise). */
function run(file: string, argumentsList: string[], options: Parameters<typeof execFile>[2]): Promise<{ stdout: string; stderr: string }> {
  const running = promisify(execFile)(file, argumentsList, { ...options, encoding: 'utf8' });
  running.child.stdin?.end();
  return running as Promise<{ stdout: string; stderr: string }>;
}

interface TurnView {
  sessionId: string;
  nextState: { role: string; content: string }[] | null;
  response: { content: string } | null;
}

async function json<Value>(url: string): Promise<Value> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Value;
}

/** The sessions with main turns, and the first turn of the only one. */
async function recordedSession(server: ClawrlServer): Promise<{ turnIds: string[]; first: TurnView; sessions: number }> {
  const sessions = (await json<{ data: { id: string; turnIds: string[] }[] }>(`${server.url}/admin/sessions`)).data.filter((session) => session.turnIds.length > 0);
  const turnIds = sessions[0]?.turnIds ?? [];
  const first = await json<TurnView>(`${server.url}/admin/turns/${turnIds[0]}`);
  return { turnIds, first, sessions: sessions.length };
}

const targets: { name: string; model: string; contextWindow: number | undefined; serveArguments: (upstream: FakeVllmServer) => string[] }[] = [
  { name: 'the embedded default (npm start)', model: 'builtin:tiny', contextWindow: undefined, serveArguments: (_upstream: FakeVllmServer) => [] as string[] },
  // The fake model's ids are bytes, so its usage counts a 51 KB prompt as 51k tokens: a window that holds them keeps OpenClaw from compacting.
  { name: 'a vLLM upstream', model: 'fake-model', contextWindow: 1_000_000, serveArguments: (upstream: FakeVllmServer) => ['--engine', 'vllm', '--upstream', upstream.url, '--model', 'fake-model'] },
];

let clis: AgentClis;
let upstream: FakeVllmServer;

beforeAll(async () => {
  [clis, upstream] = await Promise.all([installAgentClis(), startFakeVllmServer({ model: 'fake-model' })]);
}, 900_000);
afterAll(async () => {
  await upstream?.close();
});

describe.each(targets)('OpenClaw (openclaw agent --local) against $name', (target) => {
  let server: ClawrlServer;
  let home: string;
  beforeAll(async () => {
    server = await startClawrlServer(target.serveArguments(upstream));
    home = mkdtempSync(path.join(tmpdir(), 'clawrl-openclaw-'));
    mkdirSync(path.join(home, '.openclaw'));
    // The README's entry as written, but for the address (and the model, for the upstream).
    const readmeEntry = /```json\n([\s\S]*?"providers"[\s\S]*?)```/.exec(readFileSync(path.join(repositoryRoot, 'README.md'), 'utf8'))?.[1];
    if (readmeEntry === undefined) throw new Error('README has no OpenClaw entry');
    const settings = JSON.parse(readmeEntry.replaceAll('http://127.0.0.1:8400', server.url).replaceAll('builtin:tiny', target.model)) as {
      models: { providers: { clawrl: { models: { contextWindow: number }[] } } };
    };
    for (const model of settings.models.providers.clawrl.models) model.contextWindow = target.contextWindow ?? model.contextWindow;
    writeFileSync(path.join(home, '.openclaw', 'openclaw.json'), JSON.stringify(settings));
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const openclaw = (message: string) =>
    run(clis.node24, [clis.openclaw, 'agent', '--local', '--session-id', 'two-turns', '-m', message], {
      env: agentEnvironment({ HOME: home }),
      timeout: 180_000,
      maxBuffer: 16 * 1024 * 1024,
    });

  it('records both turns in one session, the second user message as the first turn\'s next state, and prints the replies', async () => {
    const first = await openclaw('What is 2 + 3?');
    const second = await openclaw('Thanks. And 4 plus 4?');
    const { turnIds, first: firstTurn, sessions } = await recordedSession(server);
    expect(sessions).toBe(1);
    expect(turnIds).toHaveLength(2);
    expect(firstTurn.nextState?.map((message) => message.content).join('\n')).toContain('Thanks. And 4 plus 4?');
    const reply = (firstTurn.response?.content ?? '').trim();
    expect(reply.length).toBeGreaterThan(0);
    expect(first.stdout).toContain(reply.slice(0, 40));
    expect(second.stdout.trim().length).toBeGreaterThan(0);
  }, 400_000);
});

describe.each(targets)('Claude Code (claude -p, then --continue) against $name', (target) => {
  let server: ClawrlServer;
  let home: string;
  let workspace: string;
  beforeAll(async () => {
    server = await startClawrlServer(target.serveArguments(upstream));
    home = mkdtempSync(path.join(tmpdir(), 'clawrl-claude-'));
    workspace = mkdtempSync(path.join(tmpdir(), 'clawrl-claude-workspace-'));
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  // docs/agents.md: the base URL without /v1, any key, the served model for both of its model slots.
  const claude = (...argumentsList: string[]) =>
    run(clis.claude, ['-p', ...argumentsList, '--model', target.model], {
      cwd: workspace,
      env: agentEnvironment({
        HOME: home,
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'sk-clawrl-local',
        ANTHROPIC_SMALL_FAST_MODEL: target.model,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: target.model,
        DISABLE_TELEMETRY: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      }),
      timeout: 180_000,
      maxBuffer: 16 * 1024 * 1024,
    });

  it("records both turns in one session, the second user message as the first turn's next state, and prints the replies", async () => {
    const first = await claude('What is 2 + 3?');
    const second = await claude('--continue', 'Thanks. And 4 plus 4?');
    const { turnIds, first: firstTurn, sessions } = await recordedSession(server);
    expect(sessions).toBe(1);
    expect(turnIds).toHaveLength(2);
    expect(firstTurn.nextState?.map((message) => message.content).join('\n')).toContain('Thanks. And 4 plus 4?');
    const reply = (firstTurn.response?.content ?? '').trim();
    expect(reply.length).toBeGreaterThan(0);
    expect(first.stdout).toContain(reply.slice(0, 40));
    expect(second.stdout.trim().length).toBeGreaterThan(0);
  }, 400_000);
});

describe.each(targets)('Codex (codex exec, then exec resume --last) against $name', (target) => {
  let server: ClawrlServer;
  let home: string;
  let workspace: string;
  beforeAll(async () => {
    server = await startClawrlServer(target.serveArguments(upstream));
    home = mkdtempSync(path.join(tmpdir(), 'clawrl-codex-'));
    workspace = mkdtempSync(path.join(tmpdir(), 'clawrl-codex-workspace-'));
    // docs/agents.md: a model provider speaking the Responses API.
    const config = [
      `model = "${target.model}"`,
      'model_provider = "clawrl"',
      '',
      '[model_providers.clawrl]',
      'name = "clawrl"',
      `base_url = "${server.url}/v1"`,
      'wire_api = "responses"',
      'env_key = "CLAWRL_API_KEY"',
      '',
    ].join('\n');
    writeFileSync(path.join(home, 'config.toml'), config);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const codex = (...argumentsList: string[]) =>
    run(clis.codex, ['exec', ...argumentsList], {
      cwd: workspace,
      env: agentEnvironment({ HOME: home, CODEX_HOME: home, CLAWRL_API_KEY: 'sk-clawrl-local' }),
      timeout: 180_000,
      maxBuffer: 16 * 1024 * 1024,
    });

  it("records both turns in one session, the second user message as the first turn's next state, and prints the replies", async () => {
    const first = await codex('--skip-git-repo-check', 'What is 2 + 3?');
    const second = await codex('resume', '--last', '--skip-git-repo-check', 'Thanks. And 4 plus 4?');
    const { turnIds, first: firstTurn, sessions } = await recordedSession(server);
    expect(sessions).toBe(1);
    expect(turnIds).toHaveLength(2);
    expect(firstTurn.nextState?.map((message) => message.content).join('\n')).toContain('Thanks. And 4 plus 4?');
    const reply = (firstTurn.response?.content ?? '').trim();
    expect(reply.length).toBeGreaterThan(0);
    expect(first.stdout).toContain(reply.slice(0, 40));
    expect(second.stdout.trim().length).toBeGreaterThan(0);
  }, 400_000);
});
