import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtinEnvironments, definitionProblems, loadEnvironment } from './environment-registry.js';

const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-env-modules-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('loadEnvironment', () => {
  it('names the built-in environments', async () => {
    expect([...builtinEnvironments.keys()]).toEqual(['arithmetic', 'tool-calc', 'terminal']);
    expect((await loadEnvironment('terminal', folder)).name).toBe('terminal');
  });

  it('refuses an unknown name with the names it knows', async () => {
    await expect(loadEnvironment('chess', folder)).rejects.toThrow(/Unknown environment 'chess': use arithmetic, tool-calc, terminal/);
  });

  it("loads a user's module by relative path, and says what a wrong export lacks", async () => {
    writeFileSync(
      path.join(folder, 'good.mjs'),
      "export const environment = { name: 'mine', description: 'd', maxTurns: 2, taskSource: { tasks: () => [] }, create: async () => ({}), verify: () => ({ reward: 0, correct: false, detail: '' }) };",
    );
    writeFileSync(path.join(folder, 'bad.mjs'), "export default { name: 'Not Kebab', maxTurns: 0 };");
    expect((await loadEnvironment('./good.mjs', folder)).name).toBe('mine');
    await expect(loadEnvironment('./bad.mjs', folder)).rejects.toThrow(/name must be a kebab-case string; description must be a string; maxTurns/);
    await expect(loadEnvironment('./missing.mjs', folder)).rejects.toThrow(/Cannot load the environment module/);
  });

  it('finds every built-in definition well formed', () => {
    for (const definition of builtinEnvironments.values()) expect(definitionProblems(definition)).toEqual([]);
  });
});
