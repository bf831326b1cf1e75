/**
 * The server the experiment starts when no `--url` is given: `clawrl serve` as a child process
 * on a free loopback port, its log written to `server.log` in its data folder, ready when it
 * prints `clawrl ready <url>`. The caller builds the arguments and environment (only the CLI
 * reads the environment).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface ExperimentServerOptions {
  /** `dist/cli/main.js` of this installation. */
  cliScript: string;
  /** Flags after `serve`; `--host`, `--port` and `--data` are added here. */
  serveArguments: readonly string[];
  data: string;
  /** The child's whole environment (secrets go here, never into flags that show in process listings). */
  environment: Record<string, string | undefined>;
  /** Loading a model folder can take a while; default two minutes. */
  readyTimeoutMs?: number;
  /** Files the caller wrote into `data` for the server (its recipe), which do not count as an earlier run. */
  preparedFiles?: readonly string[];
}

export interface ExperimentServer {
  url: string;
  logFile: string;
  /** The end of the server's log, for error messages. */
  logTail(): string;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs` (default 60 s); later calls share the first. */
  stop(graceMs?: number): Promise<void>;
}

export async function startExperimentServer(options: ExperimentServerOptions): Promise<ExperimentServer> {
  mkdirSync(options.data, { recursive: true });
  // A server on an earlier run's folder serves that run's last trained version: the run would start
  // part-way through another one and its figures would mean nothing.
  const prepared = new Set((options.preparedFiles ?? []).map((file) => path.resolve(file)));
  if (readdirSync(options.data).some((entry) => !prepared.has(path.resolve(options.data, entry)))) {
    throw new ClawrlError(
      'configuration_error',
      `the data folder ${options.data} is not empty: a server started on it would go on from the run recorded there (its sessions and trained versions). Pass a new or empty folder.`,
      { param: 'data' },
    );
  }
  const logFile = path.join(options.data, 'server.log');
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(
    process.execPath,
    [options.cliScript, 'serve', ...options.serveArguments, '--host', '127.0.0.1', '--port', '0', '--data', options.data],
    { stdio: ['ignore', 'pipe', 'pipe'], env: options.environment },
  );
  let tail = '';
  // Pipes may still deliver output after the log is closed.
  const keep = (part: Buffer) => {
    if (!log.writableEnded) log.write(part);
    tail = (tail + part.toString('utf8')).slice(-8000);
  };
  child.stderr.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      log.end();
      reject(new ClawrlError('internal_error', `clawrl serve did not become ready in ${options.readyTimeoutMs ?? 120_000} ms:\n${tail}`));
    }, options.readyTimeoutMs ?? 120_000);
    const onOutput = (part: Buffer) => {
      keep(part);
      output += part.toString('utf8');
      const match = /clawrl ready (\S+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        // Later output only goes to the log.
        child.stdout.off('data', onOutput);
        child.stdout.on('data', keep);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onOutput);
    void exited.then((code) => {
      clearTimeout(timer);
      // An exit after `ready` is the caller's to notice; the log stays open for the output still in the pipes.
      if (output.includes('clawrl ready')) return;
      log.end();
      reject(new ClawrlError('configuration_error', `clawrl serve exited with code ${code} before it was ready:\n${tail}`));
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    url,
    logFile,
    logTail: () => tail,
    stop(graceMs = 60_000) {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(timer);
        }
        if (!log.writableEnded) await new Promise<void>((resolve) => log.end(() => resolve()));
      })();
      return stopping;
    },
  };
}
