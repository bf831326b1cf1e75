/**
 * One statement of the Node clawrl needs: package.json's `engines.node`, which the README quotes and
 * CI checks (`scripts/check-node-version.mjs`, run by `.ci/run` before `npm ci`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const script = path.join(root, 'scripts', 'check-node-version.mjs');
const range = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

function check(version: string): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [script, '--node', version], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

describe('the Node version clawrl needs', () => {
  it('is stated once: the README quotes package.json engines and CI checks it before installing', () => {
    expect(readFileSync(path.join(root, 'README.md'), 'utf8')).toContain(`\`${range}\``);
    const ci = readFileSync(path.join(root, '.ci', 'run'), 'utf8');
    expect(ci.indexOf('node scripts/check-node-version.mjs')).toBeGreaterThan(-1);
    expect(ci.indexOf('node scripts/check-node-version.mjs')).toBeLessThan(ci.indexOf('npm ci'));
  });

  it('accepts this Node and the versions the range names, and refuses the others in one line', () => {
    expect(execFileSync(process.execPath, [script], { encoding: 'utf8' })).toContain('ok');
    for (const version of ['20.19.0', '20.20.2', '22.12.0', '24.22.3']) expect(check(version).status, version).toBe(0);
    for (const version of ['18.20.0', '20.18.3', '21.7.0', '22.11.0']) {
      const { status, output } = check(version);
      expect(status, version).toBe(1);
      expect(output).toBe(`check-node-version: clawrl needs Node ${range} (package.json engines); this is Node ${version}.`);
    }
  });
});
