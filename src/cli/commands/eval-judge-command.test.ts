import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../spec/logger.js';
import { resolveConfiguration } from '../configuration/configuration.js';
import { commandSchemas } from '../configuration/configuration-schema.js';
import { runEvalJudgeCommand, shippedHeldoutFile } from './eval-judge-command.js';

const folders: string[] = [];
afterEach(() => folders.splice(0).forEach((folder) => rmSync(folder, { recursive: true, force: true })));

function rowLine(id: string, expected: number, next: string): string {
  return JSON.stringify({ id, kind: expected < 0 ? 'complaint' : 'thanks', expected, context: [{ role: 'user', content: 'What is 2 + 2?' }], response: { role: 'assistant', content: '4' }, nextState: [{ role: 'user', content: next }] });
}

describe('runEvalJudgeCommand', () => {
  it('judges a user\'s own held-out file with the rules judge, to --limit rows, and writes the report to --out', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-eval-judge-'));
    folders.push(folder);
    const heldout = path.join(folder, 'mine.jsonl');
    writeFileSync(heldout, [rowLine('a', -1, "That's wrong, try again."), rowLine('b', 1, 'Thanks, that is wrong'), rowLine('c', 1, 'Great, thanks!'), rowLine('d', 1, 'Cheers')].join('\n'));
    const { configuration } = resolveConfiguration(commandSchemas.evalJudge, { flags: { judge: 'rules' }, file: {}, environment: {} });
    const out = path.join(folder, 'report');
    const result = await runEvalJudgeCommand(configuration, { heldout, limit: '2', out }, silentLogger);
    expect(result.rows).toBe(2);
    expect([...result.wrong.map((miss) => miss.id)]).not.toContain('b');
    expect(Object.keys(result.byKind).sort()).toEqual(['complaint', 'thanks']);
    expect(result.heldoutFile).toBe(heldout);
    expect(result.judge).toBe('rules');
    expect(result.accuracy.count).toBe(2);
    expect(JSON.parse(readFileSync(path.join(out, 'judge-heldout.json'), 'utf8'))).toMatchObject({ rows: 2, heldoutFile: heldout });
    expect(readFileSync(path.join(out, 'judge-heldout.txt'), 'utf8')).toContain('overall');
  });

  it('refuses a missing file and a bad --limit with configuration errors', async () => {
    const { configuration } = resolveConfiguration(commandSchemas.evalJudge, { flags: { judge: 'rules' }, file: {}, environment: {} });
    await expect(runEvalJudgeCommand(configuration, { heldout: '/nonexistent/heldout.jsonl' }, silentLogger)).rejects.toThrow('Cannot read the held-out file');
    await expect(runEvalJudgeCommand(configuration, { limit: '0' }, silentLogger)).rejects.toThrow('--limit must be an integer of at least 1');
  });

  it('defaults to the held-out file shipped beside the built-in model', () => {
    expect(readFileSync(shippedHeldoutFile, 'utf8').split('\n').filter((line) => line !== '').length).toBeGreaterThanOrEqual(200);
  });
});
