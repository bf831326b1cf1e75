/** Starts a Node process and waits for the `ready <url>` line it prints when it serves. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface ReadyProcess {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/**
 * The node flags of a script's `#!/usr/bin/env -S node <flags>` line: started with `node script`,
 * it should run as it does when run as a command.
 */
export function nodeFlagsOfShebang(firstLine: string): string[] {
  const match = /^#!\S*env\s+-S\s+node\s+(.*)$/.exec(firstLine.trim());
  return match?.[1] === undefined ? [] : match[1].split(/\s+/).filter((flag) => flag.startsWith('--'));
}

export function spawnReadyProcess(script: string, argumentsList: string[], timeoutMs = 30_000): Promise<ReadyProcess> {
  const flags = nodeFlagsOfShebang(readFileSync(script, 'utf8').split('\n', 1)[0] ?? '');
  const child = spawn(process.execPath, [...flags, script, ...argumentsList], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  child.stderr?.on('data', (part: Buffer) => {
    errors = (errors + part.toString('utf8')).slice(-4000);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new ClawrlError('internal_error', `${script} did not become ready in ${timeoutMs} ms:\n${errors}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new ClawrlError('internal_error', `${script} exited with code ${code} before it was ready:\n${errors}`));
    });
    child.stdout?.on('data', (part: Buffer) => {
      output += part.toString('utf8');
      const match = /ready (http:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({
          child,
          url: match[1],
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    });
  });
}
