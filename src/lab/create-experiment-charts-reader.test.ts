import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeExperimentResultFiles } from '../../test/testing/experiment-result-files.js';
import { createExperimentChartsReader } from './create-experiment-charts-reader.js';

let folder: string | undefined;
afterEach(() => {
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

describe('createExperimentChartsReader', () => {
  it('charts personalize and rollout result files by folder, and skips what is not one', async () => {
    folder = mkdtempSync(path.join(tmpdir(), 'clawrl-experiments-'));
    writeExperimentResultFiles(folder);
    writeFileSync(path.join(folder, 'personalize-broken.json'), '{not json');
    writeFileSync(path.join(folder, 'rollout-other.json'), JSON.stringify({ env: 'x' }));
    writeFileSync(path.join(folder, 'notes.json'), '{}');
    const charts = await createExperimentChartsReader(folder).list();
    expect(charts.map((chart) => [chart.kind, chart.title])).toEqual([
      ['personalize', 'Personalization: probe satisfaction by session (personalize)'],
      ['rollout', 'Rollout: mean reward by step (rollout)'],
      ['rollout', 'Rollout: held-out accuracy by step (rollout)'],
    ]);
    const [personalize, reward, accuracy] = charts;
    expect(personalize?.threshold).toBe(0.8);
    expect(personalize?.lines[0]?.points[0]).toEqual([0, 0.22]);
    expect(personalize?.rows[0]).toMatchObject({ user: 'student', method: 'combine', sessionsToSuccess: 6 });
    expect(reward?.lines[0]?.points).toHaveLength(6);
    // The base accuracy at step 0, then the steps that measured one.
    expect(accuracy?.lines[0]?.points.map(([step]) => step)).toEqual([0, 2, 4, 6]);
  });

  it('lists nothing for a folder that does not exist', async () => {
    expect(await createExperimentChartsReader('/nonexistent/clawrl-results').list()).toEqual([]);
  });
});
