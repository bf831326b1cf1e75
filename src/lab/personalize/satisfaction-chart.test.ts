import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PersonalizeResult } from './personalize-result.js';
import { labelOf, probeStepPoints, satisfactionChart } from './satisfaction-chart.js';
import { chartFileName, readPersonalizeResults, resultFileName, writePersonalizeOutput } from './write-personalize-output.js';

function resultOf(method: PersonalizeResult['method'], rates: Array<[number, number]>, sessions: number): PersonalizeResult {
  return {
    user: 'student',
    method,
    seed: 1,
    sessionsToSuccess: null,
    consecutiveCriterion: null,
    baseProbeRate: rates[0]?.[1] ?? 0,
    successThreshold: 0.8,
    probeSize: 50,
    model: 'builtin:tiny',
    judge: null,
    serverMethod: method,
    sessions: Array.from({ length: sessions }, (_, index) => ({
      index: index + 1,
      firstResponseSatisfied: false,
      policyVersion: 0,
      sessionId: `s${index + 1}`,
      turnIds: ['a', 'b'],
      responsesSatisfied: 0,
    })),
    probe: rates.map(([afterSession, satisfactionRate], version) => ({
      policyVersion: version,
      afterSession,
      satisfactionRate,
      satisfied: Math.round(satisfactionRate * 50),
      size: 50,
      mixedVersions: false,
    })),
  };
}

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('satisfactionChart', () => {
  it('draws each probe rate from its session until the next probe or the end of the run', () => {
    expect(probeStepPoints(resultOf('rl', [[0, 0.3], [4, 0.9]], 10))).toEqual([
      [0, 0.3],
      [4, 0.3],
      [4, 0.9],
      [10, 0.9],
    ]);
  });

  it('draws one labelled line per result and escapes labels', () => {
    const odd = { ...resultOf('opd', [[0, 0.5]], 3), user: '<me & you>' };
    const svg = satisfactionChart([resultOf('rl', [[0, 0.3], [4, 0.9]], 10), odd]);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect(svg).toContain('&lt;me &amp; you&gt;');
    expect(svg).not.toContain('<me & you>');
    expect(labelOf({ method: 'combine', user: 'ta', seed: 2, sessionsToSuccess: 12 })).toContain('from 12');
  });
});

describe('writePersonalizeOutput', () => {
  it('writes the result and charts every result file in the folder, skipping other JSON', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-personalize-out-'));
    folders.push(folder);
    writeFileSync(path.join(folder, 'notes.json'), '{"not":"a result"}');
    writeFileSync(path.join(folder, 'broken.json'), '{');
    writePersonalizeOutput(folder, resultOf('rl', [[0, 0.3]], 4));
    const written = writePersonalizeOutput(folder, resultOf('combine', [[0, 0.3], [2, 0.85]], 4));
    expect(written.charted).toBe(2);
    expect(readPersonalizeResults(folder).map((result) => result.method)).toEqual(['combine', 'rl']);
    expect(JSON.parse(readFileSync(written.resultFile, 'utf8'))).toEqual(resultOf('combine', [[0, 0.3], [2, 0.85]], 4));
    expect(readFileSync(path.join(folder, chartFileName), 'utf8').match(/<polyline /g)).toHaveLength(2);
    expect(resultFileName({ user: '../My User', method: 'opd', seed: 3 })).toBe('personalize-my-user-opd-seed3.json');
  });
});
