/**
 * The `terminal` environment's tasks: a few files in a throw-away directory and one job on them,
 * `create` (a file with given text, possibly in a new folder), `count` (files with an extension,
 * subfolders included) or `find` (the file containing a word). Train and test draw their words
 * and file names from disjoint lists, so no held-out task is ever trained on. A task's data holds
 * the files to lay out and what the verifier needs; the verifier reads the directory's final
 * state (`TerminalOutcome`), not what the agent says it did, except for the answer it gives.
 */
import { createSeededRandom, deriveSeed, type SeededRandom } from '../../core/seeded-random.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { EnvironmentTask, TaskSource, TaskSplit } from '../../spec/environment.js';

export type TerminalTaskKind = 'create' | 'count' | 'find';

export interface TerminalFile {
  path: string;
  content: string;
}

export interface TerminalTaskData {
  kind: TerminalTaskKind;
  instruction: string;
  files: TerminalFile[];
  /** create: the file to create and the text it must contain. */
  target?: { path: string; text: string };
  /** count: the extension counted; find: the word searched. */
  extension?: string;
  word?: string;
  /** count: the number; find: the file's path. */
  expected?: string;
  [key: string]: unknown;
}

const words: Readonly<Record<TaskSplit, readonly string[]>> = {
  train: ['apple', 'river', 'castle', 'pencil', 'garden', 'rocket', 'violin', 'window', 'forest', 'lemon', 'planet', 'bridge'],
  test: ['zebra', 'meadow', 'anchor', 'tulip', 'comet', 'harbor', 'walnut', 'canyon'],
};
const stems: Readonly<Record<TaskSplit, readonly string[]>> = {
  train: ['notes', 'report', 'draft', 'todo', 'summary', 'plan', 'ideas', 'journal', 'budget', 'recipe'],
  test: ['memo', 'ledger', 'sketch', 'digest', 'agenda', 'roster'],
};
const extensions = ['log', 'txt', 'csv', 'md'];
const folders = ['data', 'archive', 'old'];

function layout(random: SeededRandom, split: TaskSplit, count: number): TerminalFile[] {
  const files = new Map<string, TerminalFile>();
  while (files.size < count) {
    const folder = random.chance(0.3) ? `${random.pick(folders)}/` : '';
    const name = `${folder}${random.pick(stems[split])}${random.integer(1, 9)}.${random.pick(extensions)}`;
    files.set(name, { path: name, content: `${random.pick(words[split])} ${random.pick(words[split])}\n` });
  }
  return [...files.values()];
}

function createTask(random: SeededRandom, split: TaskSplit): TerminalTaskData {
  const files = layout(random, split, random.integer(1, 3));
  const folder = random.chance(0.5) ? `${random.pick(folders)}/` : '';
  const target = { path: `${folder}${random.pick(stems[split])}-new.txt`, text: random.pick(words[split]) };
  return { kind: 'create', instruction: `Create a file ${target.path} that contains the word ${target.text}.`, files, target };
}

function countTask(random: SeededRandom, split: TaskSplit): TerminalTaskData {
  const files = layout(random, split, random.integer(3, 8));
  const extension = random.pick(extensions);
  const expected = String(files.filter((file) => file.path.endsWith(`.${extension}`)).length);
  return { kind: 'count', instruction: `How many .${extension} files are in this directory, subfolders included? Do not change any file. Answer with the number.`, files, extension, expected };
}

function findTask(random: SeededRandom, split: TaskSplit): TerminalTaskData {
  const files = layout(random, split, random.integer(3, 6));
  const word = `${random.pick(words[split])}${random.integer(100, 999)}`;
  const chosen = random.pick(files);
  chosen.content += `the secret is ${word}\n`;
  return { kind: 'find', instruction: `Which file contains the word ${word}? Answer with its path, relative to this directory.`, files, word, expected: chosen.path };
}

const builders: Readonly<Record<TerminalTaskKind, (random: SeededRandom, split: TaskSplit) => TerminalTaskData>> = { create: createTask, count: countTask, find: findTask };
export const terminalTaskKinds: readonly TerminalTaskKind[] = ['create', 'count', 'find'];

export const terminalTaskSource: TaskSource = {
  tasks({ split, count, seed = 0, offset = 0 }) {
    return Array.from({ length: count }, (_, index) => {
      const position = offset + index;
      const random = createSeededRandom(deriveSeed(seed, 'terminal', split, position));
      const kind = terminalTaskKinds[position % terminalTaskKinds.length] as TerminalTaskKind;
      return { id: `terminal-${split}-${seed}-${position}`, split, data: builders[kind](random, split) };
    });
  },
};

export function terminalTaskOf(task: EnvironmentTask): TerminalTaskData {
  const data = task.data as Partial<TerminalTaskData>;
  if (!terminalTaskKinds.includes(data.kind as TerminalTaskKind) || typeof data.instruction !== 'string' || !Array.isArray(data.files)) {
    throw new ClawrlError('invalid_request', `Task ${task.id} is not a terminal task (needs data.kind, data.instruction and data.files).`, { param: 'task' });
  }
  return data as TerminalTaskData;
}
