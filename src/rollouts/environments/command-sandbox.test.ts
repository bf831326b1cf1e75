import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCommandSandbox, splitCommandLine, type CommandSandbox } from './command-sandbox.js';

let outside: string;
let directory: string;
let sandbox: CommandSandbox;

beforeEach(() => {
  outside = mkdtempSync(path.join(tmpdir(), 'clawrl-sandbox-test-'));
  directory = path.join(outside, 'box');
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  writeFileSync(path.join(directory, 'a.log'), 'alpha\n');
  writeFileSync(path.join(directory, 'b.log'), 'beta\n');
  writeFileSync(path.join(directory, 'c.txt'), 'gamma\n');
  writeFileSync(path.join(outside, 'secret.txt'), 'do not read\n');
  sandbox = createCommandSandbox({ directory, timeoutMs: 2000 });
});
afterEach(() => rmSync(outside, { recursive: true, force: true }));

function canIsolateNetwork(): boolean {
  return spawnSync('unshare', ['-rn', 'true'], { stdio: 'ignore' }).status === 0;
}

describe('command sandbox', () => {
  it('runs allowed commands with pipes, wildcards and redirects inside its directory', async () => {
    expect(await sandbox.run('ls *.log | wc -l')).toMatchObject({ status: 'ran', exitCode: 0, stdout: '2\n' });
    expect(await sandbox.run("find . -name '*.log'")).toMatchObject({ status: 'ran', exitCode: 0 });
    expect(await sandbox.run('echo hello > new.txt')).toMatchObject({ status: 'ran', exitCode: 0 });
    expect(readFileSync(path.join(directory, 'new.txt'), 'utf8')).toBe('hello\n');
    expect(await sandbox.run('grep -l beta a.log b.log')).toMatchObject({ stdout: 'b.log\n' });
  });

  it('refuses a program outside its allow-list, and shell syntax it does not run', async () => {
    for (const line of ['curl http://example.com', 'python3 -c "print(1)"', 'sh -c ls', 'ln -s /etc etc', 'ls; rm -rf /', 'echo $(id)', 'find . -delete', 'find . -exec cat {} +']) {
      expect(await sandbox.run(line), line).toMatchObject({ status: 'refused' });
    }
    expect(existsSync(path.join(directory, 'etc'))).toBe(false);
  });

  it('cannot read or write outside its directory', async () => {
    const attempts = [
      `cat ${path.join(outside, 'secret.txt')}`,
      'cat ../secret.txt',
      'touch ../escaped.txt',
      `echo x > ${path.join(outside, 'escaped.txt')}`,
      'echo x > ../escaped.txt',
      'cp a.log ../escaped.txt',
      'mv a.log /tmp/escaped.txt',
      'grep --file=../secret.txt a.log',
      'grep -f/etc/passwd a.log',
      'mkdir -p ../../escaped',
    ];
    for (const line of attempts) expect(await sandbox.run(line), line).toMatchObject({ status: 'refused' });
    expect(existsSync(path.join(outside, 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(directory, 'a.log'))).toBe(true);
  });

  it('does not follow a symbolic link out of its directory', async () => {
    symlinkSync(outside, path.join(directory, 'link'));
    expect(await sandbox.run('cat link/secret.txt')).toMatchObject({ status: 'refused' });
    expect(await sandbox.run('echo x > link/escaped.txt')).toMatchObject({ status: 'refused' });
    expect(existsSync(path.join(outside, 'escaped.txt'))).toBe(false);
  });

  it('kills a command at its time limit', async () => {
    const quick = createCommandSandbox({ directory, timeoutMs: 300 });
    expect(await quick.run('tail -f a.log')).toMatchObject({ status: 'ran', timedOut: true });
  });

  it('runs programs in its directory with a bare environment', async () => {
    expect(await sandbox.run('pwd')).toMatchObject({ status: 'ran', stdout: `${sandbox.directory}\n` });
  });

  it.runIf(canIsolateNetwork() && existsSync('/usr/bin/node'))('gives programs no network: a listener on this machine is out of reach', async () => {
    const server = createServer((socket) => socket.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    writeFileSync(
      path.join(directory, 'probe.js'),
      `require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (error) => { console.log(error.code); process.exit(0); });`,
    );
    // node is allowed only here, to probe the network from inside the sandbox.
    const probing = createCommandSandbox({ directory, allowedCommands: ['node'], timeoutMs: 5000 });
    const result = await probing.run('node probe.js');
    server.close();
    expect(probing.networkIsolated).toBe(true);
    expect(result).toMatchObject({ status: 'ran' });
    expect(result.status === 'ran' ? result.stdout.trim() : '').not.toBe('connected');
  });
});

describe('splitCommandLine', () => {
  it('keeps quoted wildcards literal and reads operators', () => {
    expect(splitCommandLine(`find . -name '*.log' | wc -l > n.txt`).map((word) => [word.text, word.operator, word.wildcard])).toEqual([
      ['find', false, false], ['.', false, false], ['-name', false, false], ['*.log', false, false], ['|', true, false], ['wc', false, false], ['-l', false, false], ['>', true, false], ['n.txt', false, false],
    ]);
  });
});
