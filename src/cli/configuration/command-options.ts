/**
 * Commander glue for the configuration schema: declares a command's flags from its schema, reads
 * back only what was typed, and resolves the command's configuration from flags, the config
 * file, the environment and the recipe. Keys of other components in a shared config file are
 * ignored with one log line.
 */
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import type { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';
import { flattenConfigFile, optionsOf, resolveConfiguration, type Resolved } from './configuration.js';
import { defaultRecipeFileOf, loadRecipe } from './load-recipe.js';

/** `help` replaces an option's description and default where a command uses it differently. */
export function addOptions(command: Command, schema: z.ZodObject, help: Record<string, string> = {}): Command {
  for (const specification of optionsOf(schema)) {
    if (specification.flag === undefined) continue;
    const shownDefault =
      specification.defaultValue === undefined || specification.kind === 'boolean' || (Array.isArray(specification.defaultValue) && specification.defaultValue.length === 0)
        ? ''
        : ` (default: ${JSON.stringify(specification.defaultValue)})`;
    const option = new Option(specification.flag, `${help[specification.key] ?? `${specification.description}${shownDefault}`} [${specification.environment}]`);
    if (specification.kind === 'list') option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    command.addOption(option);
  }
  return command;
}

/** Only values typed on the command line count as flags; commander's defaults would hide the file and env. */
export function typedFlags(command: Command, schema: z.ZodObject): Record<string, unknown> {
  const values = command.opts();
  const flags: Record<string, unknown> = {};
  for (const specification of optionsOf(schema)) {
    if (specification.flag === undefined) continue;
    const option = new Option(specification.flag);
    const attribute = option.attributeName();
    if (command.getOptionValueSource(attribute) !== 'cli') continue;
    // `--no-train` sets `train` to false, which is `noTrain: true`.
    flags[specification.key] = option.negate ? values[attribute] === false : values[attribute];
  }
  return flags;
}

export function readConfigFile(file: string | undefined): Record<string, unknown> {
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
  return flattenConfigFile(Object.fromEntries(Object.entries(parsed)));
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * A command's configuration. The recipe applies to commands with recipe settings: `--recipe`
 * (flag > file > environment), else the model folder's `recipe.json`.
 */
export function configurationOf<Schema extends z.ZodObject>(
  command: Command,
  schema: Schema,
  logger: Pick<Logger, 'info'> | undefined,
  environment: Record<string, string | undefined> = process.env,
): Resolved<z.infer<Schema>> {
  const flags = typedFlags(command, schema);
  const file = readConfigFile(textOf(flags.config) ?? environment.CLAWRL_CONFIG);
  const usesRecipe = Object.hasOwn(schema.shape, 'recipe');
  const recipeFile = usesRecipe
    ? (textOf(flags.recipe) ?? textOf(file.recipe) ?? environment.CLAWRL_RECIPE ?? defaultRecipeFileOf(textOf(flags.model) ?? textOf(file.model) ?? environment.CLAWRL_MODEL ?? 'builtin:tiny'))
    : undefined;
  const recipe = recipeFile === undefined ? undefined : loadRecipe(recipeFile);
  const resolved = resolveConfiguration(schema, { flags, file, environment, recipe });
  if (resolved.ignoredFileKeys.length > 0) {
    logger?.info(`config file: ignoring options of other components: ${resolved.ignoredFileKeys.join(', ')}`);
  }
  if (recipeFile !== undefined) logger?.info('recipe', { file: recipeFile, ...(recipe?.description === undefined ? {} : { description: recipe.description }) });
  return resolved.configuration;
}
