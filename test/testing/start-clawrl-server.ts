/** Starts the real built server (`dist/cli/main.js serve`) as a child process, as a user would. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const repositoryRoot = path.resolve(import.meta.dirname, '..', '..');
export const cliPath = path.join(repositoryRoot, 'dist', 'cli', 'main.js');

export function assertBuilt(): void {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run \`npm run build\` first (npm test does).`);
}

export interface ClawrlServer {
  url: string;
  child: ChildProcess;
  data: string;
  stderr(): string;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

export function createDataDirectory(): string {
  return mkdtempSync(path.join(tmpdir(), 'clawrl-e2e-'));
}

export async function startClawrlServer(argumentsList: string[], options: { data?: string; environment?: Record<string, string> } = {}): Promise<ClawrlServer> {
  assertBuilt();
  const data = options.data ?? createDataDirectory();
  const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0', '--data', data, ...argumentsList], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.environment },
  });
  let errors = '';
  let output = '';
  child.stderr?.on('data', (part: Buffer) => {
    errors += part.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: loading the built-in model on a busy 2-core machine can take most of a minute.
    const timer = setTimeout(() => reject(new Error(`clawrl did not start in time:\n${errors}`)), 90_000);
    child.stdout?.on('data', (part: Buffer) => {
      output += part.toString('utf8');
      const match = /clawrl ready (\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`clawrl exited with code ${code} before it was ready:\n${errors}`));
    });
  });
  return {
    url,
    child,
    data,
    stderr: () => errors,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
