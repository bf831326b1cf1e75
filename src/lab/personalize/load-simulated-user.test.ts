import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builtinUsers, complaintsFor, satisfiesPreference } from '../../builtin/user-preference.js';
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

  it('reads the shipped student whose rules name what they see, the built-in student apart from its complaints', () => {
    const file = path.join(import.meta.dirname, '__fixtures__/student-rule-complaints.json');
    const user = loadSimulatedUser(file);
    const { student } = builtinUsers;
    expect({ ...user.preference, rules: user.preference.rules.map(({ complaints: _, ...rule }) => rule) }).toEqual(student.preference);
    expect([user.task, user.thanks, user.hint]).toEqual([student.task, student.thanks, student.hint]);
    const onlyBroken = ['Tom has **12** apples.', 'Steps:\n1. Tom has 12 apples.', 'Tom has 12 apples, so \\boxed{12}.'];
    onlyBroken.forEach((reply, index) => {
      expect(satisfiesPreference(user.preference, reply)).toBe(false);
      expect(complaintsFor(user, reply)).toEqual(user.preference.rules[index]?.complaints);
    });
  });
});
