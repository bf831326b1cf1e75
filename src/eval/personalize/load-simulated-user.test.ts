import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builtinUsers } from '../../core/user-preference.js';
import { loadSimulatedUser } from './load-simulated-user.js';

const folders: string[] = [];
function fileWith(text: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-user-'));
  folders.push(folder);
  const file = path.join(folder, 'user.json');
  writeFileSync(file, text);
  return file;
}
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('loadSimulatedUser', () => {
  it('names the built-in users', () => {
    expect(loadSimulatedUser('teacher')).toBe(builtinUsers.teacher);
  });

  it('reads a custom user file', () => {
    const user = { ...builtinUsers.ta, name: 'short-ta', preference: { description: 'brief', rules: [{ type: 'maxWords', value: 30 }] } };
    expect(loadSimulatedUser(fileWith(JSON.stringify(user)))).toEqual(user);
  });

  it('explains a missing file, bad JSON and a file that is not a user', () => {
    expect(() => loadSimulatedUser('/nonexistent/user.json')).toThrow(/student, ta, teacher or a user JSON file/);
    expect(() => loadSimulatedUser(fileWith('{'))).toThrow(/not valid JSON/);
    expect(() => loadSimulatedUser(fileWith(JSON.stringify({ name: 'x', task: 'dance' })))).toThrow(/task:[\s\S]*complaints:/);
  });
});
