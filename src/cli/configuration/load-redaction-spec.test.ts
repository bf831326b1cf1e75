import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../core/redaction/create-redactor.js';
import { defaultRedactionSpec } from '../../core/redaction/redaction-spec.js';
import { loadRedactionSpec } from './load-redaction-spec.js';

describe('loadRedactionSpec', () => {
  it('reads off, default and a spec file, and names what is wrong with a bad one', () => {
    expect(loadRedactionSpec('off')).toBeNull();
    expect(loadRedactionSpec('default')).toBe(defaultRedactionSpec);
    const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-redact-'));
    const good = path.join(folder, 'good.json');
    writeFileSync(good, JSON.stringify({ disable: ['ip-address'], patterns: [{ kind: 'employee-id', pattern: 'EMP-\\d{6}' }], allow: ['help@clawrl.dev'] }));
    const redactor = createRedactor(loadRedactionSpec(good) ?? undefined);
    expect(redactor.redact('EMP-123456 at 10.1.2.3 wrote help@clawrl.dev and ann@corp.io').text).toBe('[REDACTED:employee-id] at 10.1.2.3 wrote help@clawrl.dev and [REDACTED:email]');
    const badPattern = path.join(folder, 'bad.json');
    writeFileSync(badPattern, JSON.stringify({ patterns: [{ kind: 'x', pattern: '(' }] }));
    expect(() => loadRedactionSpec(badPattern)).toThrow(/--redact: .*bad\.json is not a redaction spec:\n {2}patterns\.0\.pattern: pattern is not a valid regular expression/);
    const unknownKey = path.join(folder, 'unknown.json');
    writeFileSync(unknownKey, JSON.stringify({ detector: 'none' }));
    expect(() => loadRedactionSpec(unknownKey)).toThrow(/is not a redaction spec/);
    expect(() => loadRedactionSpec(path.join(folder, 'missing.json'))).toThrow(/--redact: expected off, default or a redaction spec file; cannot read/);
  });
});
