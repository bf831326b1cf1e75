/** Starts a Node process and waits for the `ready <url>` line it prints when it serves. */
import { spawn, type ChildProcess } from 'node:child_process';
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface ReadyProcess {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

export function spawnReadyProcess(script: string, argumentsList: string[], timeoutMs = 30_000): Promise<ReadyProcess> {
  const child = spawn(process.execPath, [script, ...argumentsList], { stdio: ['ignore', 'pipe', 'pipe'] });
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
