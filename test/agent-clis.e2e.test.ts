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
import { isVerdictShaped } from '../src/lab/measure/verdict-shaped-reply.js';
import type { ChatMessage, ToolDefinition } from '../src/spec/chat.js';
import { agentCliVersions, agentEnvironment, installAgentClis, type AgentClis } from './testing/agent-clis.js';
import { captureAgentRequests, writeAgentFirstRequest } from './testing/agent-first-requests.js';
import { repositoryRoot, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

/** Runs a CLI with its stdin closed, as a script would (Claude Code waits for piped input otherwise). */
function run(file: string, argumentsList: string[], options: Parameters<typeof execFile>[2]): Promise<{ stdout: string; stderr: string }> {
  const running = promisify(execFile)(file, argumentsList, { ...options, encoding: 'utf8' });
  running.child.stdin?.end();
  return running as Promise<{ stdout: string; stderr: string }>;
}

interface TurnView {
  sessionId: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  nextState: { role: string; content: string }[] | null;
  response: { content: string } | null;
}

async function json<Value>(url: string): Promise<Value> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Value;
}

/** Both turns in one session, the second message as the first turn's next state, each reply printed. */
async function expectTwoTurnsInOneSession(server: ClawrlServer, first: string | undefined, second: string | undefined): Promise<void> {
  const { turnIds, first: firstTurn, sessions } = await recordedSession(server);
  expect(sessions).toBe(1);
  expect(turnIds).toHaveLength(2);
  expect(firstTurn.nextState?.map((message) => message.content).join('\n')).toContain('Thanks. And 4 plus 4?');
  const reply = (firstTurn.response?.content ?? '').trim();
  expect(reply.length).toBeGreaterThan(0);
  expect(first).toContain(reply.slice(0, 40));
  expect(second?.trim().length).toBeGreaterThan(0);
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

const agentsDocument = readFileSync(path.join(repositoryRoot, 'docs', 'agents.md'), 'utf8');
const documentAddress = 'http://127.0.0.1:8400';

/** A fenced block of docs/agents.md. */
function documentBlock(language: string, mentioning: string): string {
  const found = [...agentsDocument.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1] ?? '').find((text) => text.includes(mentioning));
  if (found === undefined) throw new Error(`docs/agents.md has no \`\`\`${language} block mentioning ${mentioning}`);
  return found;
}

/** What a documented block says, for this server and model. */
function asServed(text: string, model: string, server: ClawrlServer): string {
  return text.replaceAll(documentAddress, server.url).replaceAll('builtin:tiny', model);
}

/**
 * Runs a documented shell block as written (the address and model aside), its commands on the
 * PATH as `npm i -g` puts them; resolves with each agent command's output.
 */
async function runDocumentedCommands(block: string, model: string, server: ClawrlServer, environment: Record<string, string>): Promise<string[]> {
  const bin = mkdtempSync(path.join(tmpdir(), 'clawrl-agent-bin-'));
  const launchers = { claude: `exec "${clis.claude}" "$@"`, codex: `exec "${clis.codex}" "$@"`, openclaw: `exec "${clis.node24}" "${clis.openclaw}" "$@"` };
  for (const [name, body] of Object.entries(launchers)) writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  const marker = '=== clawrl next command ===';
  const lines = asServed(block, model, server).split('\n').map((line) => (/^(claude|codex|openclaw) /.test(line) ? `echo '${marker}'; ${line}` : line));
  const workspace = mkdtempSync(path.join(tmpdir(), 'clawrl-agent-workspace-'));
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', lines.join('\n')], {
    cwd: workspace,
    env: agentEnvironment({ ...environment, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` }),
    timeout: 360_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout.split(marker).slice(1);
}

let clis: AgentClis;
let upstream: FakeVllmServer;

beforeAll(async () => {
  [clis, upstream] = await Promise.all([installAgentClis(), startFakeVllmServer({ model: 'fake-model', autoToolChoice: true })]);
}, 900_000);
afterAll(async () => {
  await upstream?.close();
});

type Target = (typeof targets)[number];

/** The README's OpenClaw entry as written, but for the address (and the model and window, for the upstream). */
function writeOpenClawEntry(home: string, server: ClawrlServer, target: Target): void {
  mkdirSync(path.join(home, '.openclaw'));
  const readmeEntry = /```json\n([\s\S]*?"providers"[\s\S]*?)```/.exec(readFileSync(path.join(repositoryRoot, 'README.md'), 'utf8'))?.[1];
  if (readmeEntry === undefined) throw new Error('README has no OpenClaw entry');
  const settings = JSON.parse(asServed(readmeEntry, target.model, server)) as { models: { providers: { clawrl: { models: { contextWindow: number }[] } } } };
  for (const model of settings.models.providers.clawrl.models) model.contextWindow = target.contextWindow ?? model.contextWindow;
  writeFileSync(path.join(home, '.openclaw', 'openclaw.json'), JSON.stringify(settings));
}

function writeCodexConfig(home: string, server: ClawrlServer, target: Target): void {
  mkdirSync(path.join(home, '.codex'));
  writeFileSync(path.join(home, '.codex', 'config.toml'), asServed(documentBlock('toml', 'wire_api'), target.model, server));
}

const agents = [
  { agent: 'OpenClaw (openclaw agent --local)', commands: 'openclaw agent', prepare: writeOpenClawEntry, client: 'openclaw', capturedWith: `openclaw ${agentCliVersions.openclaw}` },
  { agent: 'Claude Code (claude -p, then --continue)', commands: 'ANTHROPIC_BASE_URL', prepare: () => undefined, client: 'claude-code', capturedWith: `@anthropic-ai/claude-code ${agentCliVersions['@anthropic-ai/claude-code']}` },
  { agent: 'Codex (codex exec, then exec resume --last)', commands: 'codex exec', prepare: writeCodexConfig, client: 'codex', capturedWith: `@openai/codex ${agentCliVersions['@openai/codex']}` },
] as const;

/** The question docs/agents.md's blocks ask first. */
const firstQuestion = 'What is 2 + 3?';

describe.each(agents.flatMap((agent) => targets.map((target) => ({ ...agent, ...target, target }))))('$agent against $name', (setUp) => {
  let server: ClawrlServer;
  beforeAll(async () => {
    server = await startClawrlServer(setUp.target.serveArguments(upstream));
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("records both turns in one session, the second user message as the first turn's next state, and prints the replies", async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'clawrl-agent-home-'));
    setUp.prepare(home, server, setUp.target);
    const [first, second] = await runDocumentedCommands(documentBlock('sh', setUp.commands), setUp.model, server, { HOME: home });
    await expectTwoTurnsInOneSession(server, first, second);
    if (setUp.model !== 'builtin:tiny') return;
    const { first: firstTurn } = await recordedSession(server);
    if (captureAgentRequests) {
      writeAgentFirstRequest({ client: setUp.client, capturedWith: setUp.capturedWith, question: firstQuestion, messages: firstTurn.messages, tools: firstTurn.tools });
    }
    // The built-in model answers the agent's user rather than judging a reply (issue 56).
    expect(isVerdictShaped(firstTurn.response?.content ?? ''), firstTurn.response?.content).toBe(false);
  }, 400_000);
});
