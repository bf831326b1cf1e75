/**
 * After `npm ci` there is no `clawrl` on PATH (README, "Set up"), so every command line the README
 * and docs/ give to run is written `npx clawrl ...`; prose names commands `clawrl <command>`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const documents = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => path.join('docs', name))];

/** Lines of fenced code blocks that run `clawrl` without `npx` (comments aside). */
function bareCommands(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) {
      fenced = !fenced;
      return false;
    }
    const code = line.replace(/#.*$/, '').trim();
    return fenced && !code.startsWith('//') && /(^|[\s;&|(])clawrl [a-z]/.test(code.replaceAll('npx clawrl', ''));
  });
}

describe('documented command lines', () => {
  it.each(documents)('%s runs clawrl as npx clawrl', (document) => {
    expect(bareCommands(readFileSync(path.join(root, document), 'utf8'))).toEqual([]);
  });

  it('the README says how clawrl gets on PATH and names the real flag of the Experiments page', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    expect(readme).toContain('`npm link` there\nputs `clawrl` itself on `PATH`');
    expect(readme).toContain('`--results-dir <dir>`');
    expect(readFileSync(path.join(root, 'src', 'cli', 'configuration', 'configuration-schema.ts'), 'utf8')).toContain("flag: '--results-dir <dir>'");
  });
});
