/**
 * `--out <dir>`: writes the run as `rollout-<env>-seed<seed>.json` (checked against
 * `rolloutResultSchema` first) and redraws `accuracy.svg` from every rollout result in the folder,
 * so runs of several seeds land on one chart. Other files are left alone and skipped.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rolloutChart } from './rollout-chart.js';
import { rolloutResultFileName, rolloutResultSchema, type RolloutResult } from './rollout-result.js';

export const rolloutChartFileName = 'accuracy.svg';

export function readRolloutResults(folder: string): RolloutResult[] {
  return readdirSync(folder)
    .filter((entry) => /^rollout-.*\.json$/.test(entry))
    .sort()
    .flatMap((name) => {
      try {
        const checked = rolloutResultSchema.safeParse(JSON.parse(readFileSync(path.join(folder, name), 'utf8')));
        return checked.success ? [checked.data] : [];
      } catch {
        return [];
      }
    });
}

export function writeRolloutOutput(folder: string, result: RolloutResult): { resultFile: string; chartFile: string; charted: number } {
  mkdirSync(folder, { recursive: true });
  const resultFile = path.join(folder, rolloutResultFileName(result));
  writeFileSync(resultFile, `${JSON.stringify(rolloutResultSchema.parse(result), null, 2)}\n`);
  const results = readRolloutResults(folder);
  const chartFile = path.join(folder, rolloutChartFileName);
  writeFileSync(chartFile, rolloutChart(results));
  return { resultFile, chartFile, charted: results.length };
}
