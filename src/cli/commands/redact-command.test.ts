import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readStandardInput, redactWithRules, runEvalRedaction } from './redact-command.js';

describe('clawrl redact', () => {
  it('redacts text by the --redact rules and reports spans with kinds, never the secrets', async () => {
    const input = await readStandardInput(Readable.from([Buffer.from('key ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 '), 'mail a@b.io']));
    const result = redactWithRules(input, 'default');
    expect(result.text).toBe('key [REDACTED:api-key] mail [REDACTED:email]');
    expect(result.kinds).toEqual({ 'api-key': 1, email: 1 });
    expect(result.spans.map((span) => input.slice(span.start, span.end))).toEqual(['ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789', 'a@b.io']);
    expect(JSON.stringify(result)).not.toContain('a@b.io');
    expect(() => redactWithRules(input, 'off')).toThrow(/--redact off redacts nothing/);
  });

  it('measures the rules on the corpus', () => {
    const result = runEvalRedaction('default', 22, '3');
    expect(result).toMatchObject({ seed: '3', documents: 22 });
    expect(result.recall).toBeGreaterThanOrEqual(0.99);
    expect(() => runEvalRedaction('default', 0, '1')).toThrow(/--documents/);
  });
});
