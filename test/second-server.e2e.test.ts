/**
 * A second `clawrl serve` beside a running one touches nothing of the first's: on the same port it
 * fails on the port, on another port with the same `--data` on the folder's lock, each in one line
 * with a non-zero status, before opening the store or the trainer's checkpoint. A lock left by a
 * process that is gone is taken over.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './testing/run-cli.js';
import { createDataDirectory, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

/** Every file under `folder` with its size, modification time and content hash. */
function snapshot(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory).sort()) {
      const full = path.join(directory, entry);
      const stats = statSync(full);
      if (stats.isDirectory()) walk(full);
      else files[path.relative(folder, full)] = `${stats.size} ${stats.mtimeMs} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`;
    }
  };
  walk(folder);
  return files;
}

/** The folder's snapshot once the server has stopped writing to it (a turn's judging, the WAL's checkpoint). */
async function settled(folder: string): Promise<Record<string, string>> {
  let previous = snapshot(folder);
  for (let attempt = 0; attempt < 60; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const current = snapshot(folder);
    if (JSON.stringify(current) === JSON.stringify(previous)) return current;
    previous = current;
  }
  throw new Error(`${folder} kept changing for a minute`);
}

/** The failure line, and every other stderr line that is not the recipe the configuration applied. */
function linesOf(stderr: string): { failures: string[]; others: string[] } {
  const lines = stderr.split('\n').filter((line) => line !== '');
  return { failures: lines.filter((line) => line.startsWith('clawrl: ')), others: lines.filter((line) => !line.startsWith('clawrl: ') && !/ info recipe /.test(line)) };
}

let first: ClawrlServer;
let port: number;
beforeAll(async () => {
  // The default server: the built-in model's recipe with the trainer running, as `npm start` runs it.
  first = await startClawrlServer([]);
  port = Number(new URL(first.url).port);
  // A recorded turn, so the store has rows a second opening could touch.
  await fetch(`${first.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'builtin:tiny', messages: [{ role: 'user', content: 'What is 2 + 3?' }], max_tokens: 8 }) }).then((response) => response.text());
});
afterAll(async () => {
  await first?.stop();
});

describe('a second serve beside a running one', () => {
  it("on the same port fails on the port in one line, the first server's files untouched", async () => {
    const before = await settled(first.data);
    const second = await runCli(['serve', '--port', String(port), '--data', first.data]);
    expect(second.code, second.stderr).not.toBe(0);
    const { failures, others } = linesOf(second.stderr);
    expect(failures, second.stderr).toEqual([`clawrl: Cannot listen on 127.0.0.1:${port}: another process already uses that port. Stop it, or pass another --port (CLAWRL_PORT; --port 0 picks a free one).`]);
    expect(others, second.stderr).toEqual([]);
    expect(snapshot(first.data)).toEqual(before);
  });

  it("on another port with the same --data fails on the folder's lock, naming the holder's pid, the files untouched", async () => {
    const before = await settled(first.data);
    const second = await runCli(['serve', '--port', '0', '--data', first.data]);
    expect(second.code, second.stderr).not.toBe(0);
    const { failures, others } = linesOf(second.stderr);
    expect(failures, second.stderr).toHaveLength(1);
    expect(failures[0]).toMatch(new RegExp(`^clawrl: --data \\S+ is held by a running clawrl \\(clawrl serve, pid ${first.child.pid}\\)`));
    expect(others, second.stderr).toEqual([]);
    expect(snapshot(first.data)).toEqual(before);
  });

  it('takes over the lock of a server that is gone, and removes its own when it stops', async () => {
    const data = createDataDirectory();
    try {
      const gone = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
      writeFileSync(path.join(data, 'clawrl.lock'), JSON.stringify({ pid: gone, host: hostname(), command: 'clawrl serve' }));
      const server = await startClawrlServer(['--no-train', '--judge', 'rules'], { data });
      expect(JSON.parse(readFileSync(path.join(data, 'clawrl.lock'), 'utf8'))).toMatchObject({ pid: server.child.pid });
      expect(await server.stop(), server.stderr()).toBe(0);
      expect(existsSync(path.join(data, 'clawrl.lock'))).toBe(false);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
