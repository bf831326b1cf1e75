import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRulesJudge, defaultRulesJudgeSpec } from '../../judge/create-rules-judge.js';
import { loadRulesJudgeSpec } from './load-rules-judge-spec.js';

describe('loadRulesJudgeSpec', () => {
  it('uses the built-in predicates when unset', () => {
    expect(loadRulesJudgeSpec(undefined)).toBe(defaultRulesJudgeSpec);
  });

  it('reads a spec file and names what is wrong with a bad one', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-judge-rules-'));
    const good = path.join(folder, 'good.json');
    writeFileSync(good, JSON.stringify({ name: 'errors', rules: [{ when: [{ on: 'nextState', rule: { type: 'regex', pattern: 'Traceback', expect: true } }], score: -1 }] }));
    expect(loadRulesJudgeSpec(good).name).toBe('errors');
    const wrongScore = path.join(folder, 'wrong-score.json');
    writeFileSync(wrongScore, JSON.stringify({ name: 'x', rules: [{ when: [], score: 2 }] }));
    expect(() => loadRulesJudgeSpec(wrongScore)).toThrow(/--judge-rules: .*wrong-score\.json is not a rules-judge spec:\n {2}rules\.0\.score/);
    const broken = path.join(folder, 'broken.json');
    writeFileSync(broken, '{ "name": ');
    expect(() => loadRulesJudgeSpec(broken)).toThrow(/--judge-rules: cannot read .*broken\.json as JSON/);
    expect(() => loadRulesJudgeSpec(path.join(folder, 'missing.json'))).toThrow(/--judge-rules: cannot read/);
  });

  it('loads the shipped arithmetic-working spec, which scores the working a reply writes down', async () => {
    const file = fileURLToPath(new URL('../../../docs/examples/arithmetic-working.json', import.meta.url));
    const judge = createRulesJudge(loadRulesJudgeSpec(file));
    const scoreOf = async (reply: string) =>
      (await judge.judge({ context: [{ role: 'user', content: 'Solve this word problem.' }], response: { role: 'assistant', content: reply }, nextState: [], wantHint: false }, new AbortController().signal)).score;
    expect(await scoreOf('Adding them gives 12 + 5 = 17. So Mia has 17 apples.')).toBe(1);
    expect(await scoreOf('Adding them gives 12 + 5 = 18. So Mia has 18 apples.')).toBe(-1);
    expect(await scoreOf('Mia has 17 apples.')).toBe(0);
  });
});
