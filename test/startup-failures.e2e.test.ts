/**
 * Start-up mistakes a new user makes, tried on the real CLI: each must end the process with a
 * status that is neither 0 nor 13 (Node's "unsettled top-level await", which is how a start-up
 * clean-up that never finishes used to end it, with nothing printed) and one line that names the
 * problem, with no stack trace.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVllmServer } from '../src/engines/testing/fake-vllm-server.js';
import { assertBuilt, cliPath, createDataDirectory } from './testing/start-clawrl-server.js';

interface CliResult {
  status: number | null;
  stderr: string;
}

function runClawrl(argumentsList: string[]): Promise<CliResult> {
  assertBuilt();
  const child = spawn(process.execPath, [cliPath, ...argumentsList], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (part: Buffer) => {
    stderr += part.toString('utf8');
  });
  // Far longer than any case takes (7 s for the slowest on an idle machine, 33 s seen on a loaded one), and
  // within the test timeout: a hung process fails the test instead of the run.
  const guard = setTimeout(() => child.kill('SIGKILL'), 55_000);
  return new Promise((resolve) => {
    child.once('close', (status) => {
      clearTimeout(guard);
      resolve({ status, stderr });
    });
  });
}

/** The one line the CLI prints for a failure; the log lines of parts that started before it are not counted. */
function failureLines(result: CliResult): string[] {
  return result.stderr.split('\n').filter((line) => line.startsWith('clawrl: '));
}

function expectOneLineFailure(result: CliResult, pattern: RegExp): void {
  expect(result.status, result.stderr).not.toBe(0);
  expect(result.status, result.stderr).not.toBe(13);
  expect(result.status, result.stderr).not.toBeNull();
  expect(failureLines(result), result.stderr).toHaveLength(1);
  expect(failureLines(result)[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

const data = createDataDirectory();
const sockets: Socket[] = [];
// Accepts connections and never says a word: a Postgres or NATS host that does not answer.
const silent = createServer((socket) => {
  sockets.push(socket);
  socket.on('error', () => undefined);
});
// Holds a port, as another program would.
const occupied = createServer();
let silentPort = 0;
let occupiedPort = 0;

beforeAll(async () => {
  silentPort = await listen(silent);
  occupiedPort = await listen(occupied);
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all([silent, occupied].map((server) => new Promise((resolve) => server.close(resolve))));
  rmSync(data, { recursive: true, force: true });
});

function serve(name: string, ...argumentsList: string[]): Promise<CliResult> {
  return runClawrl(['serve', '--port', '0', '--data', path.join(data, name), ...argumentsList]);
}

describe.concurrent('clawrl serve says why it cannot start', () => {
  it('--model naming no folder', async () => {
    expectOneLineFailure(await serve('missing', '--model', path.join(data, 'no-such-model')), /^clawrl: --model \S+: there is no folder at .*model folder/);
  });

  it('--model naming an empty folder', async () => {
    const empty = path.join(data, 'empty-model');
    mkdirSync(empty, { recursive: true });
    expectOneLineFailure(await serve('empty', '--model', empty), /^clawrl: --model \S+ is not a Hugging Face model folder: .* has no config\.json/);
  });

  it('--model naming a folder without a tokenizer', async () => {
    const partial = path.join(data, 'partial-model');
    mkdirSync(partial, { recursive: true });
    writeFileSync(path.join(partial, 'config.json'), '{}');
    expectOneLineFailure(await serve('partial', '--model', partial), /^clawrl: model folder \S+: missing tokenizer\.json/);
  });

  it('--model naming a Hugging Face Hub id: clawrl never downloads, and says what to pass instead', async () => {
    const result = await serve('hub', '--model', 'Qwen/Qwen3-0.6B');
    expectOneLineFailure(result, /^clawrl: --model Qwen\/Qwen3-0\.6B looks like a Hugging Face Hub id, and clawrl never downloads weights/);
    expect(failureLines(result)[0]).toContain('--model ./Qwen3-0.6B');
    expect(failureLines(result)[0]).toContain('--engine vllm --upstream <url>');
  });

  it('--loss whose form the recipe\'s anchor has no place in, naming the setting to change', async () => {
    // builtin:tiny's recipe trains with the anchor, which Tinker's ppo (the rollout as old policy) has no term for.
    expectOneLineFailure(await serve('loss', '--loss', 'ppo'), /^clawrl: The loss ppo takes the rollout as the old policy and has no anchor \(recipe anchorCoefficient 0\.5\): set anchorCoefficient 0 or --loss decoupled_ppo\.$/);
  });

  it('--engine openai without --upstream', async () => {
    expectOneLineFailure(await serve('no-upstream', '--engine', 'openai', '--model', 'gpt-4o-mini'), /^clawrl: --engine openai needs --upstream <url>/);
  });

  it('--engine vllm --train-params full: vLLM cannot load full weights without a restart, so nothing trained would be served', async () => {
    expectOneLineFailure(
      await serve('vllm-full', '--engine', 'vllm', '--upstream', 'http://127.0.0.1:9', '--model', 'Qwen3-4B', '--train-params', 'full'),
      /^clawrl: --engine vllm cannot serve full-weight versions \(--train-params full\) without a restart: train LoRA adapters \(--train-params lora, with --adapter-dir\)/,
    );
  });

  it('--engine vllm on a server started without --enable-auto-tool-choice --tool-call-parser, which refuses every request with tools', async () => {
    const upstream = await startFakeVllmServer({ model: 'Qwen3-4B' });
    try {
      const result = await serve('vllm-tools', '--engine', 'vllm', '--upstream', upstream.url, '--model', 'Qwen3-4B', '--no-train');
      expectOneLineFailure(result, /^clawrl: the vllm server at \S+ refuses tool calls .*start vllm serve with --enable-auto-tool-choice --tool-call-parser <parser for the model: hermes for Qwen2\.5 and Qwen3/);
    } finally {
      await upstream.close();
    }
  });

    it('a port another process holds (found before the store or anything else is opened)', async () => {
    const result = await serve('port', '--port', String(occupiedPort));
    expectOneLineFailure(result, new RegExp(`^clawrl: Cannot listen on 127\\.0\\.0\\.1:${occupiedPort}: another process already uses that port.*--port`));
  });

  it('--data that is a file', async () => {
    const file = path.join(data, 'a-file');
    writeFileSync(file, 'not a folder');
    expectOneLineFailure(await serve('unused', '--data', file), /^clawrl: --data \S+ cannot hold the record store: a file is in the way/);
  });

  it('--data under a file', async () => {
    const file = path.join(data, 'another-file');
    writeFileSync(file, 'not a folder');
    expectOneLineFailure(await serve('unused', '--data', path.join(file, 'data')), /^clawrl: --data \S+ cannot hold the record store: part of that path is a file/);
  });

  it('a Postgres URL where nothing answers', async () => {
    const result = await serve('postgres', '--store', 'postgres', '--store-url', `postgres://127.0.0.1:${silentPort}/clawrl`);
    expectOneLineFailure(result, /^clawrl: cannot open the Postgres record store at postgres:\/\/127\.0\.0\.1:\d+\/clawrl .*no answer within 5 s/);
  });

  it('a NATS URL where nothing answers', async () => {
    const result = await serve('nats', '--bus', 'nats', '--bus-url', `nats://127.0.0.1:${silentPort}`);
    expectOneLineFailure(result, /^clawrl: cannot reach NATS at nats:\/\/127\.0\.0\.1:\d+: timeout/);
  });
});
