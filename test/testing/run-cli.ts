/** Runs the built `clawrl` command to its end, with its output collected: for e2e tests of client commands. */
import { spawn } from 'node:child_process';
import { cliPath } from './start-clawrl-server.js';

export function runCli(argumentsList: string[], options: { cwd?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cliPath, ...argumentsList], { stdio: ['ignore', 'pipe', 'pipe'], ...(options.cwd === undefined ? {} : { cwd: options.cwd }) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (part: Buffer) => (stdout += part.toString('utf8')));
  child.stderr.on('data', (part: Buffer) => (stderr += part.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}
