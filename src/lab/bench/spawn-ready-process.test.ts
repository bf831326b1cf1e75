import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFlagsOfShebang, spawnReadyProcess } from './spawn-ready-process.js';

describe('spawnReadyProcess', () => {
  it('reads node flags from an `env -S` shebang, and none from a plain one', () => {
    expect(nodeFlagsOfShebang('#!/usr/bin/env -S node --max-semi-space-size=64 --no-warnings')).toEqual(['--max-semi-space-size=64', '--no-warnings']);
    expect(nodeFlagsOfShebang('#!/usr/bin/env node')).toEqual([]);
    expect(nodeFlagsOfShebang('/** not a shebang */')).toEqual([]);
    const clawrlFirstLine = readFileSync(new URL('../../cli/main.ts', import.meta.url), 'utf8').split('\n', 1)[0] ?? '';
    expect(nodeFlagsOfShebang(clawrlFirstLine)).toContain('--max-semi-space-size=64');
  });

  it('starts a script with the flags its shebang names, as running it as a command would', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'clawrl-spawn-'));
    try {
      const script = path.join(directory, 'ready.mjs');
      writeFileSync(
        script,
        '#!/usr/bin/env -S node --max-semi-space-size=32\n' +
          "process.stdout.write(`ready http://127.0.0.1/${encodeURIComponent(process.execArgv.join(' '))}\\n`);\n" +
          "process.on('SIGTERM', () => process.exit(0));\nsetInterval(() => undefined, 1000);\n",
      );
      const started = await spawnReadyProcess(script, []);
      await started.stop();
      expect(decodeURIComponent(started.url.split('/').at(-1) ?? '')).toBe('--max-semi-space-size=32');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
