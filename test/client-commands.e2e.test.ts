/**
 * The client commands on the real CLI: `status` and `policy` find the server where the server's
 * own `CLAWRL_HOST`/`CLAWRL_PORT` put it (a URL given as `--url` or `CLAWRL_URL` wins), and
 * `samples export` and `rejudge` refuse a `--data` folder that holds no store. The server here is a stand-in
 * that answers the admin routes and records which were asked, so each case costs one CLI start.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cliPath } from './testing/start-clawrl-server.js';

interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with only the given CLAWRL_* variables, so the caller's shell cannot leak in. */
function runClawrl(argumentsList: string[], environment: Record<string, string> = {}): Promise<CliResult> {
  assertBuilt();
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CLAWRL_')));
  const child = spawn(process.execPath, [cliPath, ...argumentsList], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...inherited, ...environment } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (part: Buffer) => {
    stdout += part.toString('utf8');
  });
  child.stderr.on('data', (part: Buffer) => {
    stderr += part.toString('utf8');
  });
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
}

const requests: string[] = [];
function createStandIn(name: string): Server {
  return createServer((request, response) => {
    requests.push(`${name} ${request.method} ${request.url}`);
    response.setHeader('content-type', 'application/json');
    if (request.url === '/admin/status') {
      response.end(JSON.stringify({ model: name, engine: 'local', policyVersion: 3, sessions: 1, sessionsOpen: 1, turns: { main: 2 }, samples: {} }));
    } else if (request.url === '/admin/policies') {
      response.end(JSON.stringify({ data: [{ version: 0, createdAt: 0, parent: null, active: true, kind: 'base', step: null, samples: 0, metrics: null, state: 'active', stateReason: 'activated', gate: null }] }));
    } else {
      response.statusCode = 404;
      response.end(JSON.stringify({ error: { message: `Unknown route ${request.method} ${request.url}.` } }));
    }
  });
}

const byPort = createStandIn('by-port');
const byUrl = createStandIn('by-url');
let byPortPort = 0;
let byUrlPort = 0;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

beforeAll(async () => {
  byPortPort = await listen(byPort);
  byUrlPort = await listen(byUrl);
});

afterAll(async () => {
  await Promise.all([byPort, byUrl].map((server) => new Promise((resolve) => server.close(resolve))));
});

describe.concurrent('client commands find the server as the server does', () => {
  it('status reads CLAWRL_HOST and CLAWRL_PORT', async () => {
    const result = await runClawrl(['status'], { CLAWRL_HOST: '127.0.0.1', CLAWRL_PORT: String(byPortPort) });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^model\s+by-port \(local engine\)/);
    expect(result.stdout).toMatch(/policy version\s+3/);
  });

  it('policy list reads CLAWRL_PORT, and a server bound to 0.0.0.0 is reached on loopback', async () => {
    const result = await runClawrl(['policy', 'list', '--json'], { CLAWRL_HOST: '0.0.0.0', CLAWRL_PORT: String(byPortPort) });
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([expect.objectContaining({ version: 0, active: true })]);
    expect(requests).toContain('by-port GET /admin/policies');
  });

  it('CLAWRL_URL wins over CLAWRL_PORT, and --url over both', async () => {
    const fromEnvironment = await runClawrl(['status', '--json'], { CLAWRL_PORT: String(byPortPort), CLAWRL_URL: `http://127.0.0.1:${byUrlPort}` });
    expect(fromEnvironment.status, fromEnvironment.stderr).toBe(0);
    expect(JSON.parse(fromEnvironment.stdout)).toMatchObject({ model: 'by-url' });
    const fromFlag = await runClawrl(['status', '--json', '--url', `http://127.0.0.1:${byPortPort}`], { CLAWRL_URL: `http://127.0.0.1:${byUrlPort}` });
    expect(fromFlag.status, fromFlag.stderr).toBe(0);
    expect(JSON.parse(fromFlag.stdout)).toMatchObject({ model: 'by-port' });
  });

  it('says in one line which URL it tried and how to point it elsewhere when nothing answers', async () => {
    const closed = createServer();
    const port = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    const result = await runClawrl(['status'], { CLAWRL_PORT: String(port) });
    expect(result.status).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(new RegExp(`^clawrl: Cannot reach clawrl at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)\\..*--url or CLAWRL_URL`));
  });

  it('samples export and rejudge refuse a --data folder that holds no store, and create none', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'clawrl-export-e2e-'));
    const data = path.join(directory, 'wrong-folder');
    const out = path.join(directory, 'samples.jsonl');
    const result = await runClawrl(['samples', 'export', '--data', data, '--out', out]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^clawrl: --data \S+ holds no clawrl store \(no clawrl\.db there\)\. Pass the --data folder the server records into/);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(existsSync(data)).toBe(false);
    expect(existsSync(out)).toBe(false);
    const rejudge = await runClawrl(['rejudge', '--data', data, '--judge', 'rules']);
    expect(rejudge.status).toBe(2);
    // rejudge names the recipe it judges with first; the failure is its own line.
    expect(rejudge.stderr).toMatch(/^clawrl: --data \S+ holds no clawrl store/m);
    expect(existsSync(data)).toBe(false);
    rmSync(directory, { recursive: true, force: true });
  });
});
