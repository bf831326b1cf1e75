#!/usr/bin/env node
/**
 * The `clawrl` command. The only composition root: it alone reads flags, the config file and
 * `CLAWRL_*` variables, then hands typed configuration to the commands.
 */
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { ClawrlError } from '../spec/clawrl-error.js';
import { optionSpecification, resolveConfiguration, environmentVariableOf, type OptionKey } from './configuration.js';
import { createConsoleLogger } from './create-console-logger.js';
import { runServeCommand, type ServeConfiguration } from './serve-command.js';
import { fetchStatus, formatStatus } from './status-command.js';
import { runBenchCommand } from './bench-command.js';
import { runRejudgeCommand, type RejudgeConfiguration } from './rejudge-command.js';
import { runSamplesExportCommand } from './samples-export-command.js';

const serveKeys = [
  'config', 'host', 'port', 'data', 'model', 'servedModel', 'engine', 'upstream', 'upstreamModel', 'upstreamApiKey',
  'upstreamTimeout', 'judge', 'judgeUrl', 'judgeModel', 'method', 'store', 'storeUrl', 'bus', 'busUrl', 'trainEvery',
  'noTrain', 'apiKey', 'adminKey', 'bodyLimit', 'concurrencyPerKey', 'maxTokens', 'sessionIdleTimeout',
] as const satisfies readonly OptionKey[];

function addOptions(command: Command, keys: readonly OptionKey[]): Command {
  for (const key of keys) {
    const specification = optionSpecification(key);
    const shownDefault =
      specification.defaultValue === undefined || specification.kind === 'boolean' ? '' : ` (default: ${JSON.stringify(specification.defaultValue)})`;
    const option = new Option(specification.flag, `${specification.description}${shownDefault} [${environmentVariableOf(key)}]`);
    if (specification.kind === 'list') option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    command.addOption(option);
  }
  return command;
}

/** Only values typed on the command line count as flags; commander's defaults would hide the file and env. */
function typedFlags(command: Command, keys: readonly OptionKey[]): Record<string, unknown> {
  const values = command.opts();
  const flags: Record<string, unknown> = {};
  for (const key of keys) {
    if (key === 'noTrain') {
      if (command.getOptionValueSource('train') === 'cli') flags.noTrain = values.train === false;
      continue;
    }
    if (command.getOptionValueSource(key) === 'cli') flags[key] = values[key];
  }
  return flags;
}

function readConfigFile(file: string | undefined): Record<string, unknown> {
  if (file === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ClawrlError('configuration_error', `Cannot read the config file ${file} (--config, CLAWRL_CONFIG): ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ClawrlError('configuration_error', `The config file ${file} must hold a JSON object of options.`);
  }
  return parsed as Record<string, unknown>;
}

function configurationOf<Key extends OptionKey>(command: Command, keys: readonly Key[]): Record<Key, unknown> {
  const flags = typedFlags(command, keys);
  const configFile = (flags.config as string | undefined) ?? process.env.CLAWRL_CONFIG;
  return resolveConfiguration(keys, { flags, file: readConfigFile(configFile), environment: process.env });
}

function fail(error: unknown): never {
  const message = ClawrlError.isInstance(error) ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`clawrl: ${message}\n`);
  process.exit(ClawrlError.isInstance(error) && error.code === 'configuration_error' ? 2 : 1);
}

const program = new Command('clawrl')
  .description('Online reinforcement learning for LLM agents behind an OpenAI-compatible gateway')
  .showHelpAfterError();

addOptions(program.command('serve').description('serve, record, judge and train in one process'), serveKeys).action(
  async (_options: unknown, command: Command) => {
    try {
      const configuration = configurationOf(command, serveKeys) as unknown as ServeConfiguration;
      await runServeCommand(configuration, createConsoleLogger());
    } catch (error) {
      fail(error);
    }
  },
);

const statusKeys = ['config', 'url', 'adminKey', 'json'] as const satisfies readonly OptionKey[];
addOptions(program.command('status').description('counts and current policy version of a running server'), statusKeys).action(
  async (_options: unknown, command: Command) => {
    try {
      const configuration = configurationOf(command, statusKeys);
      const status = await fetchStatus(configuration.url as string, configuration.adminKey as string | undefined);
      process.stdout.write(`${configuration.json === true ? JSON.stringify(status, null, 2) : formatStatus(status)}\n`);
    } catch (error) {
      fail(error);
    }
  },
);

program
  .command('bench')
  .description('benchmarks against a peer in the same run: gateway (engine and store arrive with their issues)')
  .argument('<target>', 'gateway | engine | store')
  .option('--json', 'print JSON')
  .option('--quick', 'a short run (smoke test), not for reporting figures')
  .action(async (target: string, options: { json?: boolean; quick?: boolean }) => {
    try {
      await runBenchCommand(target, { json: options.json === true, quick: options.quick === true });
    } catch (error) {
      fail(error);
    }
  });

const rejudgeKeys = [
  'config', 'data', 'store', 'storeUrl', 'judge', 'judgeUrl', 'judgeModel', 'method', 'model', 'servedModel', 'engine',
  'upstream', 'upstreamModel', 'upstreamApiKey', 'upstreamTimeout', 'json',
] as const satisfies readonly OptionKey[];
addOptions(program.command('rejudge').description('re-score stored turns with another judge or prompt version, keeping earlier judgements'), rejudgeKeys)
  .option('--since <time>', 'only turns started since (epoch ms or a date)')
  .option('--force', 're-judge turns this judge already judged')
  .action(async (options: { since?: string; force?: boolean }, command: Command) => {
    try {
      const configuration = { ...configurationOf(command, rejudgeKeys), since: options.since, force: options.force === true };
      const result = await runRejudgeCommand(configuration as unknown as RejudgeConfiguration, createConsoleLogger());
      process.stdout.write(configuration.json === true ? `${JSON.stringify(result)}\n` : `judged ${result.judged}, skipped ${result.skipped}, failed ${result.failed}\n`);
      if (result.failed > 0) process.exitCode = 1;
    } catch (error) {
      fail(error);
    }
  });

const exportKeys = ['config', 'data', 'store', 'storeUrl', 'json'] as const satisfies readonly OptionKey[];
addOptions(program.command('samples').description('training samples').command('export').description('write samples as JSON lines'), exportKeys)
  .requiredOption('--out <file>', 'the JSONL file to write')
  .option('--status <status>', 'ready | trained | dropped (default: all)')
  .action(async (options: { out: string; status?: string }, command: Command) => {
    try {
      if (options.status !== undefined && !['ready', 'trained', 'dropped'].includes(options.status)) {
        throw new ClawrlError('configuration_error', `--status must be ready, trained or dropped, got ${options.status}.`);
      }
      const configuration = configurationOf(command, exportKeys);
      const written = await runSamplesExportCommand({
        data: configuration.data as string,
        store: configuration.store as 'sqlite' | 'postgres',
        storeUrl: configuration.storeUrl as string | undefined,
        out: options.out,
        status: options.status as 'ready' | 'trained' | 'dropped' | undefined,
      });
      process.stdout.write(configuration.json === true ? `${JSON.stringify({ written, out: options.out })}\n` : `wrote ${written} samples to ${options.out}\n`);
    } catch (error) {
      fail(error);
    }
  });

await program.parseAsync(process.argv);
