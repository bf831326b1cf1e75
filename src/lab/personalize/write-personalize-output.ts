/**
 * `--out <dir>`: writes the run's JSON as `personalize-<user>-<method>-seed<seed>.json` and
 * redraws `satisfaction.svg` and the results table `summary.md` from every result file in the folder, so runs of several methods
 * (or seeds, or users) written to one folder end up on one chart. Other JSON files in the
 * folder are left alone and skipped.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { personalizeResultSchema, type PersonalizeResult } from './personalize-result.js';
import { personalizeSummaryTable } from './personalize-summary.js';
import { satisfactionChart } from './satisfaction-chart.js';

export const chartFileName = 'satisfaction.svg';
export const summaryFileName = 'summary.md';

export function resultFileName(result: Pick<PersonalizeResult, 'user' | 'method' | 'seed' | 'sharedWith'>): string {
  const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'user';
  const shared = result.sharedWith === undefined || result.sharedWith.length === 0 ? '' : `-with-${result.sharedWith.map(slug).join('-')}`;
  return `personalize-${slug(result.user)}${shared}-${result.method}-seed${result.seed}.json`;
}

/** Every parseable result file in `folder`, in file-name order. */
export function readPersonalizeResults(folder: string): PersonalizeResult[] {
  const results: PersonalizeResult[] = [];
  for (const name of readdirSync(folder).filter((entry) => entry.endsWith('.json')).sort()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path.join(folder, name), 'utf8'));
    } catch {
      continue;
    }
    const checked = personalizeResultSchema.safeParse(parsed);
    if (checked.success) results.push(checked.data);
  }
  return results;
}

export interface PersonalizeOutputResult {
  resultFile: string;
  chartFile: string;
  summaryFile: string;
  /** How many result files the chart shows. */
  charted: number;
}

export function writePersonalizeOutput(folder: string, result: PersonalizeResult): PersonalizeOutputResult {
  mkdirSync(folder, { recursive: true });
  const resultFile = path.join(folder, resultFileName(result));
  writeFileSync(resultFile, `${JSON.stringify(result, null, 2)}\n`);
  const results = readPersonalizeResults(folder);
  const chartFile = path.join(folder, chartFileName);
  writeFileSync(chartFile, satisfactionChart(results));
  const summaryFile = path.join(folder, summaryFileName);
  writeFileSync(summaryFile, personalizeSummaryTable(results));
  return { resultFile, chartFile, summaryFile, charted: results.length };
}
