/**
 * Where the `terminal` environment runs a model's shell commands, in two layers.
 *
 * The OS layer (`isolation: 'bwrap'`): each program runs under bubblewrap (`bubblewrap.ts`) with
 * the sandbox's directory as the only writable place, the rest of the machine read-only or absent,
 * no network, its own PID namespace, killed with its parent. Where bwrap cannot run, `auto` falls
 * back to the path layer alone, saying so once, and `bwrap` refuses to start.
 *
 * The path layer, always: nothing reaches a shell: the sandbox parses the command line itself
 * (words, quotes, `|` pipes, a final `>` or `>>` redirect), and refuses, as data the model reads
 * back, anything it does not allow:
 * - a program outside the allow-list (no network tools, interpreters or `ln`), and the options
 *   of allowed programs that run or write other things (`find -exec`, `-delete`, `-fprint`);
 * - any path that resolves outside the sandbox's directory (absolute paths elsewhere, `..`,
 *   a symbolic link pointing out), for reading as for writing;
 * and runs each program with the directory as its working directory, a bare environment
 * (`PATH=/usr/bin:/bin`, `HOME` the directory), a time limit (SIGKILL), bounded output, and,
 * without bwrap, when the machine allows unprivileged namespaces (`unshare -rn`), in a network
 * namespace of its own with no interface but loopback. `*` and `?` in the last part of a path
 * are expanded within the directory, as a shell would.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';
import { bubblewrapCommand, bubblewrapProblem } from './bubblewrap.js';

export const defaultAllowedCommands: readonly string[] = [
  'ls', 'cat', 'wc', 'grep', 'find', 'head', 'tail', 'sort', 'uniq', 'mkdir', 'touch', 'echo', 'printf', 'cp', 'mv', 'rm', 'pwd', 'tee', 'cut', 'tr',
];
const refusedOptions: Readonly<Record<string, readonly string[]>> = {
  find: ['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls'],
};

/** How programs are confined: bubblewrap and the path checks, or the path checks alone. */
export type SandboxIsolation = 'bwrap' | 'paths';
/** What is asked for (`--sandbox`): `auto` is bwrap where it runs, else the path checks with a warning. */
export type SandboxMode = SandboxIsolation | 'auto';

let fallbackWarned = false;
/** The isolation `mode` gets on this machine; `bwrap` where bwrap cannot run is a configuration error. */
export function resolveSandboxMode(mode: SandboxMode, logger?: Logger): SandboxIsolation {
  if (mode === 'paths') return 'paths';
  const problem = bubblewrapProblem();
  if (problem === null) return 'bwrap';
  if (mode === 'bwrap') {
    throw new ClawrlError('configuration_error', `--sandbox bwrap: ${problem}. Install bubblewrap (apt-get install -y bubblewrap), or use --sandbox auto or paths.`, { param: 'sandbox' });
  }
  if (!fallbackWarned) {
    fallbackWarned = true;
    const message = `terminal sandbox: ${problem}; commands run with the path checks alone (install bubblewrap for an OS sandbox, or pass --sandbox paths to choose this)`;
    if (logger === undefined) process.emitWarning(message);
    else logger.warn(message);
  }
  return 'paths';
}

export interface CommandSandboxOptions {
  /** The sandbox's own directory; every path must stay inside it. */
  directory: string;
  allowedCommands?: readonly string[];
  /** Per command line (default 5 s). */
  timeoutMs?: number;
  /** Bytes of output kept per stream (default 16 KiB). */
  maxOutputBytes?: number;
  /** Default `auto`. */
  mode?: SandboxMode;
  /** Hears the one warning `auto` gives where bwrap cannot run (default: a process warning). */
  logger?: Logger;
}

export type CommandRunResult =
  | { status: 'ran'; exitCode: number | null; stdout: string; stderr: string; timedOut: boolean }
  | { status: 'refused'; reason: string };

export interface CommandSandbox {
  readonly directory: string;
  readonly isolation: SandboxIsolation;
  /** Whether programs run without network (their own network namespace). */
  readonly networkIsolated: boolean;
  run(commandLine: string): Promise<CommandRunResult>;
}

interface Stage {
  program: string;
  arguments: string[];
}

class Refusal extends Error {}

/** A word of a command line; a word with quoted wildcards is not expanded, as in a shell. */
export interface CommandWord {
  text: string;
  /** `|`, `>` or `>>` outside quotes. */
  operator: boolean;
  /** Has `*` or `?` outside quotes. */
  wildcard: boolean;
}

/** Words of a command line: single and double quotes, backslash escapes; `|`, `>`, `>>` as operators. */
export function splitCommandLine(line: string): CommandWord[] {
  const words: CommandWord[] = [];
  let current = '';
  let inWord = false;
  let wildcard = false;
  const end = () => {
    if (inWord) words.push({ text: current, operator: false, wildcard });
    current = '';
    inWord = false;
    wildcard = false;
  };
  for (let index = 0; index < line.length; index += 1) {
    const character = line[index] as string;
    if (character === "'" || character === '"') {
      const close = line.indexOf(character, index + 1);
      if (close < 0) throw new Refusal('unterminated quote');
      current += line.slice(index + 1, close);
      inWord = true;
      index = close;
    } else if (character === '\\' && index + 1 < line.length) {
      current += line[index + 1];
      inWord = true;
      index += 1;
    } else if (/\s/.test(character) || character === '|' || character === '>') {
      end();
      if (character === '|') words.push({ text: '|', operator: true, wildcard: false });
      if (character === '>') {
        const append = line[index + 1] === '>';
        words.push({ text: append ? '>>' : '>', operator: true, wildcard: false });
        if (append) index += 1;
      }
    } else if (';&`$<()'.includes(character)) {
      throw new Refusal(`'${character}' is not supported: run one command (pipes with | and a final > or >> redirect are)`);
    } else {
      current += character;
      inWord = true;
      if (character === '*' || character === '?') wildcard = true;
    }
  }
  end();
  return words;
}

let namespaceSupport: boolean | undefined;
function canIsolateNetwork(): boolean {
  namespaceSupport ??= spawnSync('unshare', ['-rn', 'true'], { stdio: 'ignore', timeout: 5000 }).status === 0;
  return namespaceSupport;
}

export function createCommandSandbox(options: CommandSandboxOptions): CommandSandbox {
  const root = realpathSync(options.directory);
  const allowed = new Set(options.allowedCommands ?? defaultAllowedCommands);
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxOutput = options.maxOutputBytes ?? 16 * 1024;
  const isolation = resolveSandboxMode(options.mode ?? 'auto', options.logger);
  const networkIsolated = isolation === 'bwrap' || canIsolateNetwork();

  function inside(target: string): boolean {
    const relative = path.relative(root, target);
    return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
  }

  /** The path resolved, through any links of the part that exists, and refused when it leaves the directory. */
  function checkedPath(word: string): string {
    const resolved = path.resolve(root, word);
    let existing = resolved;
    while (!existsSync(existing) && existing !== path.dirname(existing)) existing = path.dirname(existing);
    const real = path.join(realpathSync(existing), path.relative(existing, resolved));
    if (!inside(resolved) || !inside(real)) throw new Refusal(`'${word}' is outside the sandbox directory`);
    return real;
  }

  function expand(commandWord: CommandWord): string[] {
    const word = commandWord.text;
    if (!commandWord.wildcard) return [word];
    const directory = path.dirname(word);
    if (/[*?]/.test(directory)) throw new Refusal(`wildcards only in the last part of a path: '${word}'`);
    const folder = checkedPath(directory);
    const pattern = new RegExp(`^${path.basename(word).replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*').replaceAll('?', '.')}$`);
    const matches = existsSync(folder) ? readdirSync(folder).filter((name) => pattern.test(name) && !name.startsWith('.')).sort() : [];
    return matches.length === 0 ? [word] : matches.map((name) => (directory === '.' ? name : path.join(directory, name)));
  }

  function stagesOf(words: CommandWord[]): { stages: Stage[]; redirect: { append: boolean; file: string } | null } {
    let redirect: { append: boolean; file: string } | null = null;
    const redirectAt = words.findIndex((word) => word.operator && word.text !== '|');
    if (redirectAt >= 0) {
      const file = words[redirectAt + 1];
      if (file === undefined || file.operator || redirectAt + 2 !== words.length) throw new Refusal('a redirect takes one file and ends the command');
      redirect = { append: words[redirectAt]?.text === '>>', file: checkedPath(file.text) };
      words = words.slice(0, redirectAt);
    }
    const stages: Stage[] = [];
    let current: CommandWord[] = [];
    const pipe: CommandWord = { text: '|', operator: true, wildcard: false };
    for (const word of [...words, pipe]) {
      if (!word.operator) {
        current.push(word);
        continue;
      }
      const [first, ...rest] = current;
      const program = first?.text;
      if (program === undefined) throw new Refusal('empty command');
      if (!allowed.has(program)) throw new Refusal(`'${program}' is not allowed; allowed: ${[...allowed].join(', ')}`);
      const refused = (refusedOptions[program] ?? []).find((option) => rest.some((word) => word.text === option));
      if (refused !== undefined) throw new Refusal(`${program} ${refused} is not allowed`);
      const expanded = rest.flatMap(expand);
      // Every word that could name a file is checked; options and plain words stay inside the directory too.
      for (const argument of expanded) {
        if (!argument.startsWith('-')) checkedPath(argument);
        // An option carries a path only as --name=<path>, which is checked like any path.
        else if (argument.includes('=')) checkedPath(argument.slice(argument.indexOf('=') + 1));
        else if (argument.includes('/')) throw new Refusal(`give the path of '${argument}' as its own word, or as --option=<path>`);
      }
      stages.push({ program, arguments: expanded });
      current = [];
    }
    return { stages, redirect };
  }

  function runStage(stage: Stage, input: string, deadline: number): Promise<{ exitCode: number | null; stdout: string; stderr: string; timedOut: boolean }> {
    const { command, arguments: commandArguments } =
      isolation === 'bwrap' ? bubblewrapCommand(root, stage.program, stage.arguments)
      : networkIsolated ? { command: 'unshare', arguments: ['-rn', stage.program, ...stage.arguments] }
      : { command: stage.program, arguments: stage.arguments };
    return new Promise((resolve) => {
      const child = spawn(command, commandArguments, { cwd: root, env: { PATH: '/usr/bin:/bin', HOME: root, LANG: 'C' }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, Math.max(1, deadline - Date.now()));
      child.stdout.on('data', (part: Buffer) => {
        if (stdout.length < maxOutput) stdout += part.toString('utf8');
      });
      child.stderr.on('data', (part: Buffer) => {
        if (stderr.length < maxOutput) stderr += part.toString('utf8');
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(input);
      child.on('error', (error) => {
        clearTimeout(timer);
        resolve({ exitCode: 127, stdout, stderr: `${stderr}${error.message}`, timedOut });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ exitCode: code, stdout: stdout.slice(0, maxOutput), stderr: stderr.slice(0, maxOutput), timedOut });
      });
    });
  }

  return {
    directory: root,
    isolation,
    networkIsolated,
    async run(commandLine) {
      let plan: ReturnType<typeof stagesOf>;
      try {
        plan = stagesOf(splitCommandLine(commandLine.trim()));
      } catch (error) {
        if (error instanceof Refusal) return { status: 'refused', reason: error.message };
        throw error;
      }
      const deadline = Date.now() + timeoutMs;
      let input = '';
      let last = { exitCode: 0 as number | null, stdout: '', stderr: '', timedOut: false };
      let stderr = '';
      for (const stage of plan.stages) {
        last = await runStage(stage, input, deadline);
        stderr += last.stderr;
        input = last.stdout;
        if (last.timedOut) break;
      }
      if (plan.redirect !== null && !last.timedOut) {
        await (plan.redirect.append ? appendFile : writeFile)(plan.redirect.file, last.stdout);
        return { status: 'ran', exitCode: last.exitCode, stdout: '', stderr, timedOut: false };
      }
      return { status: 'ran', exitCode: last.exitCode, stdout: last.stdout, stderr, timedOut: last.timedOut };
    },
  };
}
