/**
 * Resolves configuration from the one schema (`configuration-schema.ts`): flag > config file >
 * environment > recipe > default, and reports errors naming the option and its variable. Every
 * list here (flags, variables, file keys, help, the docs table) is read off the schema. Nothing
 * outside `src/cli` reads the environment or config files.
 */
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { configurationSections, optionRegistry, recipeSettings, type Recipe, type SectionName } from './configuration-schema.js';

/** How a value arrives from a flag or the environment (always text) before the schema coerces it. */
export type OptionKind = 'string' | 'number' | 'boolean' | 'list';

export interface OptionSpecification {
  /** Key in the config file and the resolved configuration. */
  key: string;
  /** The component it belongs to; `recipe` for recipe settings, which have no flag. */
  section: SectionName | 'recipe';
  /** Flag as commander declares it; undefined for recipe settings. */
  flag: string | undefined;
  environment: string | undefined;
  description: string;
  kind: OptionKind;
  /** A recipe file may set it. */
  recipe: boolean;
  defaultValue: unknown;
}

function innerOf(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault) return innerOf(schema.unwrap() as z.ZodType);
  return schema;
}

function kindOf(schema: z.ZodType): OptionKind {
  const inner = innerOf(schema);
  if (inner instanceof z.ZodNumber) return 'number';
  if (inner instanceof z.ZodBoolean) return 'boolean';
  if (inner instanceof z.ZodArray) return 'list';
  return 'string';
}

export function environmentName(flag: string): string {
  const name = /--([a-z0-9-]+)/.exec(flag)?.[1] ?? flag;
  return `CLAWRL_${name.replaceAll('-', '_').toUpperCase()}`;
}

function specificationOf(key: string, schema: z.ZodType, section: SectionName | 'recipe'): OptionSpecification {
  const metadata = optionRegistry.get(schema);
  const parsedDefault = schema.safeParse(undefined);
  return {
    key,
    section,
    flag: metadata?.flag,
    environment: metadata === undefined ? undefined : environmentName(metadata.flag),
    description: metadata?.description ?? schema.description ?? '',
    kind: kindOf(schema),
    recipe: metadata === undefined || metadata.recipe === true,
    defaultValue: parsedDefault.success ? parsedDefault.data : undefined,
  };
}

/** Every option of every command, by component, then the recipe settings. */
export const optionSpecifications: readonly OptionSpecification[] = [
  ...Object.entries(configurationSections).flatMap(([section, object]) =>
    Object.entries(object.shape).map(([key, schema]) => specificationOf(key, schema, section as SectionName)),
  ),
  ...Object.entries(recipeSettings.shape).map(([key, schema]) => specificationOf(key, schema, 'recipe')),
];

const specificationsByKey = new Map(optionSpecifications.map((specification) => [specification.key, specification]));

/** The options of a command schema, in its order. */
export function optionsOf(schema: z.ZodObject): OptionSpecification[] {
  return Object.keys(schema.shape).flatMap((key) => specificationsByKey.get(key) ?? []);
}

export function environmentVariableOf(key: string): string | undefined {
  return specificationsByKey.get(key)?.environment;
}

/** Text from a flag or the environment, coerced to the option's kind. */
function coerceText(kind: OptionKind, text: string): unknown {
  switch (kind) {
    case 'string':
      return text;
    case 'number':
      return text.trim() === '' ? Number.NaN : Number(text);
    case 'boolean': {
      const normalized = text.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(normalized)) return true;
      if (['0', 'false', 'no', 'off', ''].includes(normalized)) return false;
      return text;
    }
    case 'list':
      return text.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
  }
}

/**
 * Options that moved to another component, by their old one: a config file written before still
 * reads (`{"learning": {"rlWeight": 0.5}}`; the weights are the trainer's since it forms advantages).
 */
const formerSections: Readonly<Record<string, SectionName>> = { rlWeight: 'learning', opdWeight: 'learning' };

/**
 * A config file's options, flat: a key may sit at the top level or inside its component's
 * object (`{"gateway": {"port": 8400}}`). Unknown keys are an error; recipe settings belong in
 * a recipe file.
 */
export function flattenConfigFile(file: Record<string, unknown>): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  const unknown: string[] = [];
  const add = (key: string, value: unknown, section?: string) => {
    const specification = specificationsByKey.get(key);
    const inPlace = section === undefined || specification?.section === section || formerSections[key] === section;
    if (specification === undefined || specification.section === 'recipe' || !inPlace) {
      unknown.push(section === undefined ? key : `${section}.${key}`);
      return;
    }
    flat[key] = value;
  };
  for (const [key, value] of Object.entries(file)) {
    if (Object.hasOwn(configurationSections, key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [inner, innerValue] of Object.entries(value)) add(inner, innerValue, key);
    } else {
      add(key, value);
    }
  }
  if (unknown.length > 0) {
    throw new ClawrlError(
      'configuration_error',
      `Unknown option(s) in the config file: ${unknown.join(', ')} (recipe settings go in a --recipe file; docs/configuration.md).`,
    );
  }
  return flat;
}

export interface ConfigurationSources {
  /** Values the user typed on the command line (commander source 'cli' only), by key. */
  flags: Record<string, unknown>;
  /** The config file, flat (`flattenConfigFile`), or empty. */
  file: Record<string, unknown>;
  environment: Record<string, string | undefined>;
  /** The recipe in force, or none. */
  recipe?: Recipe | undefined;
}

/** Every key present: an unset optional option is there as undefined, as the commands' interfaces expect. */
export type Resolved<Value> = { [Key in keyof Required<Value>]: Value[Key] };

export interface ResolvedConfiguration<Value> {
  configuration: Resolved<Value>;
  /** Config-file keys of other components, which this command ignores. */
  ignoredFileKeys: string[];
}

function describe(specification: OptionSpecification): string {
  return specification.flag === undefined ? `recipe setting ${specification.key}` : `${specification.flag.split(' ')[0]} (${specification.environment})`;
}

function rawValueOf(specification: OptionSpecification, sources: ConfigurationSources): unknown {
  const { key, kind } = specification;
  const flag = sources.flags[key];
  if (flag !== undefined) return typeof flag === 'string' ? coerceText(kind, flag) : flag;
  if (sources.file[key] !== undefined) return sources.file[key];
  const variable = specification.environment === undefined ? undefined : sources.environment[specification.environment];
  if (variable !== undefined) return coerceText(kind, variable);
  if (specification.recipe && sources.recipe !== undefined) return (sources.recipe as Record<string, unknown>)[key];
  return undefined;
}

/**
 * Resolves a command's options: flag > config file > environment > recipe > default. Throws a
 * `configuration_error` naming the option, its variable and the problem.
 */
export function resolveConfiguration<Schema extends z.ZodObject>(schema: Schema, sources: ConfigurationSources): ResolvedConfiguration<z.infer<Schema>> {
  const raw: Record<string, unknown> = {};
  for (const specification of optionsOf(schema)) {
    const value = rawValueOf(specification, sources);
    const leaf = schema.shape[specification.key];
    const parsed = leaf === undefined ? undefined : (leaf as z.ZodType).safeParse(value);
    if (parsed !== undefined && !parsed.success) {
      const problem = parsed.error.issues[0]?.message ?? 'invalid value';
      throw new ClawrlError('configuration_error', `Invalid value for ${describe(specification)}: ${problem} (got ${JSON.stringify(value)}).`, {
        param: specification.key,
      });
    }
    raw[specification.key] = value;
  }
  // Parsing the whole object types it; each key was checked above, so this cannot fail.
  const configuration: Resolved<z.infer<Schema>> = schema.parse(raw);
  const ignoredFileKeys = Object.keys(sources.file).filter((key) => !Object.hasOwn(schema.shape, key));
  return { configuration, ignoredFileKeys };
}
