/**
 * `terminal`: a task on files in a throw-away directory (`terminal-tasks.ts`), solved by shell
 * commands through a `run` tool executed in a sandbox (`command-sandbox.ts`: its own directory, a
 * time limit, no network, an allow-list; nothing can be written outside the directory; bubblewrap
 * where the machine has it, `--sandbox`). Each
 * tool call is answered with the command's output; the first reply without one is the answer.
 * When done, the outcome is the directory's final state (every file's path and the start of its
 * text) and the answer; the verifier checks that state, reward 1 or 0. `close` removes the
 * directory.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChatMessage, ToolCall, ToolDefinition } from '../../spec/chat.js';
import type { EnvironmentDefinition, EnvironmentOutcome, EnvironmentTask, Verdict } from '../../spec/environment.js';
import type { Logger } from '../../spec/logger.js';
import { createCommandSandbox, defaultAllowedCommands, resolveSandboxMode, type CommandSandbox, type SandboxMode } from './command-sandbox.js';
import { finalTextAnswer } from './final-answer.js';
import { stringToolArgument } from './string-tool-argument.js';
import { createSingleUseGuard } from './single-use-guard.js';
import { terminalTaskOf, terminalTaskSource, type TerminalFile } from './terminal-tasks.js';

export const runTool: ToolDefinition = {
  name: 'run',
  description: `Runs one shell command in the task's directory and returns its output. Allowed programs: ${defaultAllowedCommands.join(', ')}; pipes (|) and a final > or >> redirect work.`,
  parameters: { type: 'object', properties: { command: { type: 'string', description: 'the command line' } }, required: ['command'] },
};

const maxTurns = 6;
const keptContentChars = 400;

export async function runToolCall(sandbox: CommandSandbox, call: ToolCall): Promise<string> {
  if (call.name !== runTool.name) return `error: unknown tool '${call.name}'; the only tool is run`;
  const command = stringToolArgument(call, 'command');
  if (!command.ok) return command.error;
  const result = await sandbox.run(command.value);
  if (result.status === 'refused') return `refused: ${result.reason}`;
  const output = `${result.stdout}${result.stderr === '' ? '' : `\n[stderr]\n${result.stderr}`}`.trim();
  return `${result.timedOut ? '[timed out]\n' : ''}${output === '' ? '(no output)' : output}\n[exit ${result.exitCode ?? 'killed'}]`;
}

/** Every regular file under `root`, sorted, with the start of its text. */
export function directoryState(root: string): TerminalFile[] {
  const files: TerminalFile[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(path.join(root, relative)).sort()) {
      const child = relative === '' ? entry : `${relative}/${entry}`;
      const stats = statSync(path.join(root, child));
      if (stats.isDirectory()) walk(child);
      else if (stats.isFile()) files.push({ path: child, content: readFileSync(path.join(root, child), 'utf8').slice(0, keptContentChars) });
    }
  };
  walk('');
  return files;
}

function filesOf(outcome: EnvironmentOutcome): TerminalFile[] | null {
  const files = outcome.files;
  if (!Array.isArray(files)) return null;
  return files.flatMap((file: unknown) => {
    const entry = file as Partial<TerminalFile>;
    return typeof entry?.path === 'string' && typeof entry.content === 'string' ? [{ path: entry.path, content: entry.content }] : [];
  });
}

const normalizePath = (text: string) => text.trim().replace(/^\.\//, '');

export interface TerminalEnvironmentOptions {
  /** How commands are confined (default `auto`: bubblewrap where it runs). */
  sandbox?: SandboxMode;
  /** Hears the sandbox's one warning where `auto` finds no bubblewrap. */
  logger?: Logger;
}

export function createTerminalEnvironment(options: TerminalEnvironmentOptions = {}): EnvironmentDefinition {
  return {
    name: 'terminal',
    description: 'create, count and find files in a throw-away directory with shell commands through a sandboxed run tool',
    maxTurns,
    taskSource: terminalTaskSource,
    async create(task) {
      const data = terminalTaskOf(task);
      const guard = createSingleUseGuard('terminal');
      // Before the directory is made: `--sandbox bwrap` without bwrap fails here.
      const mode = resolveSandboxMode(options.sandbox ?? 'auto', options.logger);
      const directory = mkdtempSync(path.join(tmpdir(), 'clawrl-terminal-'));
      let removed = false;
      for (const file of data.files) {
        mkdirSync(path.dirname(path.join(directory, file.path)), { recursive: true });
        writeFileSync(path.join(directory, file.path), file.content);
      }
      const sandbox = createCommandSandbox({ directory, mode });
      let actions = 0;
      return {
        async initialObservation() {
          guard.observe();
          const instruction = `${data.instruction}\nUse the run tool to run shell commands in the task's directory. When you are done, reply with the answer (or "done") and no tool call.`;
          return { messages: [{ role: 'user', content: instruction }], tools: [runTool] };
        },
        async step(action) {
          guard.act();
          actions += 1;
          const calls = action.toolCalls ?? [];
          if (calls.length > 0 && actions < maxTurns) {
            const observation: ChatMessage[] = [];
            for (const call of calls) observation.push({ role: 'tool', toolCallId: call.id, name: call.name, content: await runToolCall(sandbox, call) });
            return { observation, done: false };
          }
          guard.finish();
          const outcome = { answer: finalTextAnswer(action.content), files: directoryState(sandbox.directory) };
          return { observation: [], done: true, outcome, verdict: verifyTerminalOutcome(task, outcome) };
        },
        async close() {
          if (removed) return;
          removed = true;
          rmSync(directory, { recursive: true, force: true });
        },
      };
    },
    verify: verifyTerminalOutcome,
  };
}

export const terminalEnvironment = createTerminalEnvironment();

function verifyTerminalOutcome(task: EnvironmentTask, outcome: EnvironmentOutcome): Verdict {
  const data = terminalTaskOf(task);
  const files = filesOf(outcome);
  if (files === null) return { reward: 0, correct: false, detail: 'no final directory state' };
  const answer = typeof outcome.answer === 'string' ? outcome.answer : null;
  const verdict = (correct: boolean, detail: string): Verdict => ({ reward: correct ? 1 : 0, correct, detail });
  switch (data.kind) {
    case 'create': {
      const target = data.target ?? { path: '', text: '' };
      const file = files.find((entry) => entry.path === target.path);
      if (file === undefined) return verdict(false, `${target.path} does not exist`);
      return verdict(file.content.includes(target.text), `${target.path} ${file.content.includes(target.text) ? 'contains' : 'lacks'} '${target.text}'`);
    }
    case 'count': {
      const present = files.filter((entry) => entry.path.endsWith(`.${data.extension ?? ''}`)).length;
      const unchanged = present === Number(data.expected);
      const given = answer === null ? null : Number((/-?\d+/.exec(answer) ?? [''])[0]);
      const correct = unchanged && given === Number(data.expected);
      return verdict(correct, `expected ${data.expected}, found ${answer ?? 'no answer'}${unchanged ? '' : ` (the directory now has ${present})`}`);
    }
    case 'find': {
      const expected = data.expected ?? '';
      const stillThere = files.some((entry) => entry.path === expected && entry.content.includes(data.word ?? ''));
      const given = answer === null ? null : normalizePath(answer.split(/\s+/).find((part) => part.includes('.')) ?? answer);
      const correct = stillThere && given === expected;
      return verdict(correct, `expected ${expected}, found ${answer ?? 'no answer'}${stillThere ? '' : ' (the file was changed)'}`);
    }
  }
}
