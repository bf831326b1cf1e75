import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bubblewrapProblem } from './bubblewrap.js';
import { createCommandSandbox, resolveSandboxMode, splitCommandLine, type CommandSandbox, type SandboxIsolation } from './command-sandbox.js';

let outside: string;
let directory: string;
let sandbox: CommandSandbox;

const withoutBubblewrap = bubblewrapProblem();
// Loud, not silent: CI installs bubblewrap (scripts/check-services.sh), so this prints only on a machine without it.
if (withoutBubblewrap !== null) console.warn(`command-sandbox.test.ts: skipping the bwrap runs: ${withoutBubblewrap}`);
const isolations: SandboxIsolation[] = withoutBubblewrap === null ? ['paths', 'bwrap'] : ['paths'];

beforeEach(() => {
  outside = mkdtempSync(path.join(tmpdir(), 'clawrl-sandbox-test-'));
  directory = path.join(outside, 'box');
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  writeFileSync(path.join(directory, 'a.log'), 'alpha\n');
  writeFileSync(path.join(directory, 'b.log'), 'beta\n');
  writeFileSync(path.join(directory, 'c.txt'), 'gamma\n');
  writeFileSync(path.join(outside, 'secret.txt'), 'do not read\n');
});
afterEach(() => rmSync(outside, { recursive: true, force: true }));

function canIsolateNetwork(): boolean {
  return spawnSync('unshare', ['-rn', 'true'], { stdio: 'ignore' }).status === 0;
}

describe.each(isolations)('command sandbox (%s)', (isolation) => {
  beforeEach(() => {
    sandbox = createCommandSandbox({ directory, timeoutMs: 2000, mode: isolation });
  });

  it('confines programs as asked', () => {
    expect(sandbox.isolation).toBe(isolation);
  });

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
    const quick = createCommandSandbox({ directory, timeoutMs: 300, mode: isolation });
    expect(await quick.run('tail -f a.log')).toMatchObject({ status: 'ran', timedOut: true });
  });

  it('runs programs in its directory with a bare environment', async () => {
    expect(await sandbox.run('pwd')).toMatchObject({ status: 'ran', stdout: `${sandbox.directory}\n` });
  });

  it.runIf((isolation === 'bwrap' || canIsolateNetwork()) && existsSync('/usr/bin/node'))('gives programs no network: a listener on this machine is out of reach', async () => {
    const server = createServer((socket) => socket.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    writeFileSync(
      path.join(directory, 'probe.js'),
      `require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (error) => { console.log(error.code); process.exit(0); });`,
    );
    // node is allowed only here, to probe the network from inside the sandbox.
    const probing = createCommandSandbox({ directory, allowedCommands: ['node'], timeoutMs: 5000, mode: isolation });
    const result = await probing.run('node probe.js');
    server.close();
    expect(probing.networkIsolated).toBe(true);
    expect(result).toMatchObject({ status: 'ran' });
    expect(result.status === 'ran' ? result.stdout.trim() : '').not.toBe('connected');
  });
});

describe.skipIf(withoutBubblewrap !== null)('command sandbox under bwrap, past the path checks', () => {
  // `sh` is allowed only here: its script is one quoted word the path checks cannot see into, as
  // any program with a bug or a feature the checks miss would be.
  let shell: CommandSandbox;
  beforeEach(() => {
    shell = createCommandSandbox({ directory, allowedCommands: ['sh'], timeoutMs: 5000, mode: 'bwrap' });
  });

  it('cannot write outside its directory, by a relative path, an absolute one, or a link', async () => {
    symlinkSync(outside, path.join(directory, 'link'));
    for (const script of ['echo x > ../escaped.txt', `echo x > ${path.join(outside, 'escaped.txt')}`, 'echo x > link/escaped.txt', 'echo x > /escaped.txt', 'mkdir /tmp/escaped']) {
      const result = await shell.run(`sh -c '${script}'`);
      expect(result, script).toMatchObject({ status: 'ran' });
      expect(result.status === 'ran' ? result.exitCode : 0, script).not.toBe(0);
    }
    expect(existsSync(path.join(outside, 'escaped.txt'))).toBe(false);
    // The same script without the OS layer escapes: the path checks alone do not stop it.
    const unconfined = createCommandSandbox({ directory, allowedCommands: ['sh'], mode: 'paths' });
    expect(await unconfined.run(`sh -c 'echo x > ../escaped.txt'`)).toMatchObject({ status: 'ran', exitCode: 0 });
    expect(existsSync(path.join(outside, 'escaped.txt'))).toBe(true);
  });

  it('writes inside its directory, and sees nothing of the machine outside it but the system', async () => {
    expect(await shell.run(`sh -c 'echo inside > made.txt; cat made.txt'`)).toMatchObject({ status: 'ran', exitCode: 0, stdout: 'inside\n' });
    expect(readFileSync(path.join(directory, 'made.txt'), 'utf8')).toBe('inside\n');
    const secret = await shell.run(`sh -c 'cat ../secret.txt ${path.join(outside, 'secret.txt')}'`);
    expect(secret).toMatchObject({ status: 'ran', stdout: '' });
    expect(secret.status === 'ran' ? secret.stderr : '').toContain('No such file');
    expect(await shell.run(`sh -c 'ls /home /root /etc/passwd'`)).toMatchObject({ status: 'ran', stdout: '' });
  });

  it('runs programs in a PID namespace of their own, with a bare environment', async () => {
    const result = await shell.run(`sh -c 'ls /proc | grep -c "^[0-9]"; env'`);
    expect(result).toMatchObject({ status: 'ran', exitCode: 0 });
    const [processes, ...environment] = (result.status === 'ran' ? result.stdout : '').trim().split('\n');
    // bwrap itself, the shell, ls and grep: none of this machine's processes.
    expect(Number(processes)).toBeLessThanOrEqual(4);
    expect(environment.map((line) => line.split('=')[0]).sort()).toEqual(['HOME', 'LANG', 'PATH', 'PWD']);
  });
});

describe('resolveSandboxMode', () => {
  it('gives the path checks when asked, and bwrap for auto exactly where bwrap runs', () => {
    expect(resolveSandboxMode('paths')).toBe('paths');
    expect(resolveSandboxMode('auto', { info() {}, warn() {}, error() {} })).toBe(withoutBubblewrap === null ? 'bwrap' : 'paths');
    if (withoutBubblewrap === null) expect(resolveSandboxMode('bwrap')).toBe('bwrap');
    else expect(() => resolveSandboxMode('bwrap')).toThrow(/--sandbox bwrap/);
  });
});

describe('splitCommandLine', () => {
  it('keeps quoted wildcards literal and reads operators', () => {
    expect(splitCommandLine(`find . -name '*.log' | wc -l > n.txt`).map((word) => [word.text, word.operator, word.wildcard])).toEqual([
      ['find', false, false], ['.', false, false], ['-name', false, false], ['*.log', false, false], ['|', true, false], ['wc', false, false], ['-l', false, false], ['>', true, false], ['n.txt', false, false],
    ]);
  });
});
