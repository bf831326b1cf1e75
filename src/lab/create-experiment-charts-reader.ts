/**
 * The Experiments page's source (`--results-dir`): every `eval personalize` and `rollout` result
 * file under a folder (and its sub-folders, three levels down; `rollout-result.ts` and
 * `personalize-result.ts` are their schemas), as the charts those commands
 * write: personalization's probe satisfaction rate by session with the success threshold, one
 * chart per folder as `satisfaction.svg` draws it; a rollout's reward and held-out accuracy by step.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { ExperimentChart, ExperimentCharts } from '../spec/experiment-charts.js';
import { rolloutResultSchema, type RolloutResult } from '../rollouts/rollout-result.js';
import { personalizeResultSchema, successThreshold, type PersonalizeResult } from './personalize/personalize-result.js';

const maximumDepth = 3;

async function jsonFilesUnder(folder: string, depth = 0): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch {
    return [];
  }
  const nested = await Promise.all(
    entries.filter((entry) => entry.isDirectory() && depth < maximumDepth).map((entry) => jsonFilesUnder(path.join(folder, entry.name), depth + 1)),
  );
  const here = entries.filter((entry) => entry.isFile() && entry.name.endsWith('.json')).map((entry) => path.join(folder, entry.name));
  return [...here.sort(), ...nested.flat()];
}

async function parsedJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function personalizeChart(folder: string, results: PersonalizeResult[]): ExperimentChart {
  return {
    kind: 'personalize',
    title: `Personalization: probe satisfaction by session (${folder})`,
    xLabel: 'sessions',
    yLabel: 'probe satisfaction rate',
    threshold: successThreshold,
    lines: results.map((result) => ({
      label: `${result.user} ${result.method} seed ${result.seed}`,
      points: result.probe.map((probe) => [probe.afterSession, probe.satisfactionRate] as [number, number]),
    })),
    rows: results.map((result) => ({
      user: result.user,
      method: result.method,
      seed: result.seed,
      sessionsToSuccess: result.sessionsToSuccess,
      consecutiveCriterion: result.consecutiveCriterion,
      baseProbeRate: result.baseProbeRate,
      sessions: result.sessions.length,
    })),
  };
}

function rolloutCharts(folder: string, results: RolloutResult[]): ExperimentChart[] {
  const label = (result: RolloutResult) => `${result.env} seed ${result.seed}`;
  const rows = results.map((result) => ({
    env: result.env,
    group: result.group,
    tasksPerStep: result.tasksPerStep,
    seed: result.seed,
    steps: result.steps.length,
    baseAccuracy: result.baseAccuracy,
    finalAccuracy: result.finalAccuracy,
  }));
  return [
    {
      kind: 'rollout',
      title: `Rollout: mean reward by step (${folder})`,
      xLabel: 'step',
      yLabel: 'mean reward',
      threshold: null,
      lines: results.map((result) => ({ label: label(result), points: result.steps.map((step) => [step.step, step.reward] as [number, number]) })),
      rows,
    },
    {
      kind: 'rollout',
      title: `Rollout: held-out accuracy by step (${folder})`,
      xLabel: 'step',
      yLabel: 'accuracy',
      threshold: null,
      lines: results.map((result) => ({
        label: label(result),
        points: [
          [0, result.baseAccuracy] as [number, number | null],
          ...result.steps.filter((step) => step.accuracy !== null).map((step) => [step.step, step.accuracy] as [number, number | null]),
        ],
      })),
      rows: [],
    },
  ];
}

export function createExperimentChartsReader(folder: string): ExperimentCharts {
  return {
    folder,
    async list() {
      const personalize = new Map<string, PersonalizeResult[]>();
      const rollout = new Map<string, RolloutResult[]>();
      for (const file of await jsonFilesUnder(folder)) {
        const name = path.basename(file);
        const where = path.relative(folder, path.dirname(file)) || '.';
        const json = name.startsWith('personalize-') || name.startsWith('rollout-') ? await parsedJson(file) : undefined;
        if (name.startsWith('personalize-')) {
          const checked = personalizeResultSchema.safeParse(json);
          if (checked.success) personalize.set(where, [...(personalize.get(where) ?? []), checked.data]);
        } else if (name.startsWith('rollout-')) {
          const checked = rolloutResultSchema.safeParse(json);
          if (checked.success) rollout.set(where, [...(rollout.get(where) ?? []), checked.data]);
        }
      }
      return [
        ...[...personalize].map(([where, results]) => personalizeChart(where, results)),
        ...[...rollout].flatMap(([where, results]) => rolloutCharts(where, results)),
      ];
    },
  };
}
