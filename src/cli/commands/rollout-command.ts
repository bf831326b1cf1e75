/**
 * `clawrl rollout`: group rollouts of an environment through a clawrl server (docs/environments.md).
 * Without `--url` it starts its own `clawrl serve` child with a fresh data folder, as `eval
 * personalize` does, so every run starts from the base model. Defaults for that server, and why:
 * - `--method rl`: the driver posts each turn's reward with its group and turn index, and the
 *   trainer forms the GRPO advantage of an RL sample from it;
 * - `--train-every` one step's turns (group × tasks × maxTurns): the driver steps training itself
 *   (`POST /admin/training/step`) once a step's samples are in, and one call takes them all;
 * - `--judge rules` with `--reward outcome` (the outcome is all that counts, the PRM would only
 *   cost time), `--judge policy` with `--reward outcome+process` (the PRM scores every turn), and
 *   `--judge rules` whenever `--judge-rules <spec>` is given, whose rules are then the process reward;
 * - the model's rollout recipe (`rollout-recipe.json` in its folder, else its `recipe.json`; or `--recipe`), with `groupNormalizeStd: true` when `--normalize-std` is
 *   given. A group's samples are always taken against their group's mean, whatever the recipe's
 *   `rewardBaseline` (which applies to live traffic), so nothing else of the recipe is overridden.
 *
 * With `--url` the server's own recipe decides how groups are normalised, so `--normalize-std` is
 * refused there rather than silently ignored.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { RewardMode } from '../../core/rl/aggregate-votes.js';
import { loadEnvironment } from '../../rollouts/environments/environment-registry.js';
import { startExperimentServer, type ExperimentServer } from '../../lab/personalize/start-experiment-server.js';
import { createRolloutClient } from '../../rollouts/rollout-client.js';
import type { RolloutResult } from '../../rollouts/rollout-result.js';
import { runRollout } from '../../rollouts/run-rollout.js';
import { writeRolloutOutput } from '../../rollouts/write-rollout-output.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { configurationSections } from '../configuration/configuration-schema.js';
import { createConsoleLogger } from '../wiring/create-console-logger.js';
import { clientKeyOf, integerOption, serverEnvironmentOf } from './eval-command.js';
import { defaultRolloutRecipeFileOf, loadRecipe } from '../configuration/load-recipe.js';

const { files, storage, engine, gateway, judge, trainer, client, queue } = configurationSections;
export const rolloutSchema = z.object({
  ...files.pick({ config: true, recipe: true }).shape,
  ...client.shape,
  ...gateway.pick({ apiKey: true, adminKey: true, maxTokens: true, temperature: true }).shape,
  ...engine.shape,
  ...judge.shape,
  ...trainer.pick({ trainParams: true, learningRate: true, klCoefficient: true, maxStaleness: true }).shape,
  ...storage.pick({ data: true }).shape,
  ...queue.pick({ sandbox: true }).shape,
});
export type RolloutConfiguration = z.infer<typeof rolloutSchema>;

export const rolloutHelp: Record<string, string> = {
  url: 'drive this running clawrl server (default: start a fresh one as a child process)',
  data: 'data folder of the server it starts, kept afterwards (default: a temporary folder, removed after a successful run)',
  judge: 'judge of the server it starts (default: rules with --reward outcome or --judge-rules, else policy)',
  trainParams: "lora | full, for the server it starts (default: the model's recipe)",
  recipe: "recipe of the server it starts (default: the model folder's recipe.json)",
  adminKey: 'admin key: the driver reads judgements and steps training through the admin routes',
};

export interface RolloutCommandOptions {
  env: string;
  group: string;
  tasksPerStep: string;
  parallel: string;
  steps: string;
  evalEvery: string;
  evalSize: string;
  seed: string;
  reward: string;
  normalizeStd?: boolean;
  evalTemperature?: string;
  out?: string;
}

export interface RolloutCommandInput {
  options: RolloutCommandOptions;
  configuration: RolloutConfiguration;
  explicitKeys: ReadonlySet<string>;
  configFile: string | undefined;
  environment: Record<string, string | undefined>;
  cwd: string;
}

function evalTemperatureOf(text: string | undefined): number | null {
  if (text === undefined) return null;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > 2) {
    throw new ClawrlError('configuration_error', `--eval-temperature must be a number in 0..2, got ${JSON.stringify(text)}.`, { param: 'eval-temperature' });
  }
  return value;
}

function rewardModeOf(text: string): RewardMode {
  if (text === 'outcome' || text === 'outcome+process') return text;
  throw new ClawrlError('configuration_error', `--reward must be outcome or outcome+process, got ${JSON.stringify(text)}.`, { param: 'reward' });
}

export function rolloutServeArguments(input: RolloutCommandInput, rewardMode: RewardMode, trainEvery: number, recipe: string): string[] {
  const configuration = input.configuration;
  const explicit = (key: keyof RolloutConfiguration) => input.explicitKeys.has(key);
  const flags: Array<[string, unknown]> = [
    ['--method', 'rl'],
    ['--model', configuration.model],
    ['--engine', configuration.engine],
    ['--upstream', configuration.upstream],
    ['--upstream-model', configuration.upstreamModel],
    ['--judge', explicit('judge') ? configuration.judge : rewardMode === 'outcome' || configuration.judgeRules !== undefined ? 'rules' : 'policy'],
    ['--judge-url', configuration.judgeUrl],
    ['--judge-model', configuration.judgeModel],
    ['--judge-rules', configuration.judgeRules],
    ['--recipe', recipe],
    ['--train-every', trainEvery],
    ['--train-params', explicit('trainParams') ? configuration.trainParams : undefined],
    ['--learning-rate', configuration.learningRate],
    ['--kl-coefficient', explicit('klCoefficient') ? configuration.klCoefficient : undefined],
    ['--max-staleness', explicit('maxStaleness') ? configuration.maxStaleness : undefined],
    ['--max-tokens', configuration.maxTokens],
    ['--temperature', configuration.temperature],
    ['--config', input.configFile],
  ];
  return flags.flatMap(([flag, value]) => (value === undefined ? [] : [flag, String(value)]));
}

export function formatRolloutResult(result: RolloutResult): string {
  const measured = result.steps.filter((step) => step.accuracy !== null).map((step) => `${step.step}: ${step.accuracy?.toFixed(3)}`);
  return [
    `env ${result.env}, ${result.rewardMode} rewards, group ${result.group} × ${result.tasksPerStep} tasks per step, seed ${result.seed}, model ${result.model}`,
    `held-out accuracy   base ${result.baseAccuracy.toFixed(3)} → ${result.finalAccuracy.toFixed(3)} after ${result.steps.length} steps (${result.evalSize} tasks)`,
    `accuracy by step    ${measured.join(', ') || 'not measured'}`,
    `reward by step      ${result.steps.map((step) => step.reward.toFixed(2)).join(' ')}`,
    `zero-variance groups ${result.steps.reduce((sum, step) => sum + step.zeroVarianceGroups, 0)} of ${result.steps.reduce((sum, step) => sum + step.groups, 0)} (dropped, not trained)`,
    ...processRewardLines(result),
  ].join('\n');
}

/** In outcome+process mode: in how many groups the PRM's votes could change an advantage, and a warning when in none. */
function processRewardLines(result: RolloutResult): string[] {
  if (result.rewardMode === 'outcome') return [];
  const varied = result.steps.reduce((sum, step) => sum + (step.processVariedGroups ?? 0), 0);
  const groups = result.steps.reduce((sum, step) => sum + step.groups, 0);
  const line = `process rewards varied within ${varied} of ${groups} groups`;
  if (varied > 0) return [line];
  return [`${line}: the judge gave every rollout of a group the same process reward, so it changed no advantage and this run trained as --reward outcome would (try a judge that can tell these turns apart)`];
}

export async function runRolloutCommand(input: RolloutCommandInput): Promise<RolloutResult> {
  const { options, configuration } = input;
  const definition = await loadEnvironment(options.env, input.cwd, { sandbox: configuration.sandbox, logger: createConsoleLogger() });
  const group = integerOption('group', options.group, 2);
  const tasksPerStep = integerOption('tasks-per-step', options.tasksPerStep, 1);
  const parallel = integerOption('parallel', options.parallel, 1);
  const steps = integerOption('steps', options.steps, 1);
  const evalEvery = integerOption('eval-every', options.evalEvery, 0);
  const evalSize = integerOption('eval-size', options.evalSize, 1);
  const seed = integerOption('seed', options.seed, 0);
  const rewardMode = rewardModeOf(options.reward);
  const evalTemperature = evalTemperatureOf(options.evalTemperature);
  const normalizeStd = options.normalizeStd === true;
  if (normalizeStd && input.explicitKeys.has('url')) {
    throw new ClawrlError('configuration_error', '--normalize-std sets the recipe of the server clawrl rollout starts; with --url, set groupNormalizeStd in that server\'s recipe instead.', { param: 'normalize-std' });
  }
  const progress = (line: string) => process.stderr.write(`clawrl rollout: ${line}\n`);
  const startedAt = new Date();
  let server: ExperimentServer | undefined;
  let serverArguments: string[] | null = null;
  let temporaryData: string | undefined;
  let url = configuration.url ?? '';
  /** The started server's recipe setting; null with --url, whose recipe this command does not know. */
  let groupNormalizeStd: boolean | null = null;
  try {
    if (!input.explicitKeys.has('url')) {
      const data = input.explicitKeys.has('data') ? configuration.data : (temporaryData = mkdtempSync(path.join(tmpdir(), 'clawrl-rollout-')));
      mkdirSync(data, { recursive: true });
      const recipe = path.join(data, 'rollout-recipe.json');
      // The model's rollout recipe (the built-in model's is LoRA: its live-traffic recipe wrecks its arithmetic here).
      const modelRecipe = defaultRolloutRecipeFileOf(configuration.model);
      const base = configuration.recipe !== undefined ? loadRecipe(configuration.recipe) : modelRecipe === undefined ? {} : loadRecipe(modelRecipe);
      groupNormalizeStd = normalizeStd || base.groupNormalizeStd === true;
      writeFileSync(recipe, `${JSON.stringify({ description: 'written by clawrl rollout', ...base, ...(normalizeStd ? { groupNormalizeStd: true } : {}) }, null, 2)}\n`);
      serverArguments = rolloutServeArguments(input, rewardMode, group * tasksPerStep * definition.maxTurns, recipe);
      progress(`starting clawrl serve (data and server.log in ${data})`);
      server = await startExperimentServer({
        cliScript: fileURLToPath(new URL('../main.js', import.meta.url)),
        serveArguments: serverArguments,
        data,
        environment: serverEnvironmentOf(input),
        preparedFiles: [recipe],
      });
      url = server.url;
      progress(`server ready at ${url}`);
    }
    const measured = await runRollout({
      client: createRolloutClient({ url, apiKey: clientKeyOf(configuration.apiKey), adminKey: configuration.adminKey }),
      definition,
      group,
      tasksPerStep,
      parallel,
      steps,
      evalEvery,
      evalSize,
      seed,
      rewardMode,
      ...(evalTemperature === null ? {} : { evalSampling: { temperature: evalTemperature } }),
      runId: `rollout-${Date.now().toString(36)}-${definition.name}-${seed}`,
      onProgress: progress,
    });
    const result: RolloutResult = {
      env: definition.name,
      group,
      tasksPerStep,
      seed,
      rewardMode,
      normalizeStd: groupNormalizeStd,
      evalSize,
      evalEvery,
      evalTemperature,
      ...measured,
      serverArguments,
      startedAt: startedAt.toISOString(),
      durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    };
    await server?.stop();
    if (temporaryData !== undefined) rmSync(temporaryData, { recursive: true, force: true });
    if (options.out !== undefined) {
      const written = writeRolloutOutput(options.out, result);
      progress(`wrote ${written.resultFile} and ${written.chartFile} (${written.charted} result(s))`);
    }
    return result;
  } catch (error) {
    const tail = server?.logTail() ?? '';
    await server?.stop(10_000);
    const kept = temporaryData === undefined ? '' : ` The server's data and log are kept in ${temporaryData}.`;
    const message = error instanceof Error ? error.message : String(error);
    throw new ClawrlError(ClawrlError.isInstance(error) ? error.code : 'upstream_error', `The rollout against ${url || 'the server'} failed: ${message}${kept}${tail === '' ? '' : `\nEnd of the server log:\n${tail.slice(-3000)}`}`, {
      cause: error,
    });
  }
}
