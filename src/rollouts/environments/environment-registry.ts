/**
 * `--env <name|module>`: a built-in environment by name, or a user's ES module that exports an
 * `EnvironmentDefinition` (as `default` or as `environment`), given as a path (`./my-env.js`,
 * `/abs/env.mjs`) or a `file:` URL. A module's export is checked for the definition's shape, so
 * a wrong export fails at start-up with what is missing rather than in the middle of a run.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { EnvironmentDefinition } from '../../spec/environment.js';
import { arithmeticEnvironment } from './arithmetic-environment.js';
import { createTerminalEnvironment, type TerminalEnvironmentOptions } from './terminal-environment.js';
import { toolCalcEnvironment } from './tool-calc-environment.js';

/** What the composition root decides for the built-in environments (`--sandbox`). */
export type BuiltinEnvironmentOptions = TerminalEnvironmentOptions;

export function createBuiltinEnvironments(options: BuiltinEnvironmentOptions = {}): ReadonlyMap<string, EnvironmentDefinition> {
  return new Map([arithmeticEnvironment, toolCalcEnvironment, createTerminalEnvironment(options)].map((definition) => [definition.name, definition]));
}

export const builtinEnvironments = createBuiltinEnvironments();

/** What is wrong with a module's export as an `EnvironmentDefinition`; empty when nothing. */
export function definitionProblems(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return ['it is not an object'];
  const candidate = value as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof candidate.name !== 'string' || !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(candidate.name)) problems.push('name must be a kebab-case string');
  if (typeof candidate.description !== 'string') problems.push('description must be a string');
  if (typeof candidate.maxTurns !== 'number' || !Number.isInteger(candidate.maxTurns) || candidate.maxTurns < 1) problems.push('maxTurns must be a positive integer');
  if (typeof candidate.create !== 'function') problems.push('create(task) must be a function');
  if (typeof candidate.verify !== 'function') problems.push('verify(task, outcome) must be a function');
  const source = candidate.taskSource as Record<string, unknown> | undefined;
  if (typeof source !== 'object' || source === null || typeof source.tasks !== 'function') problems.push('taskSource.tasks(options) must be a function');
  return problems;
}

function looksLikeModule(reference: string): boolean {
  return reference.startsWith('.') || reference.startsWith('/') || reference.startsWith('file:') || /\.(m?js|cjs)$/.test(reference);
}

/** Resolves `--env`; `cwd` anchors a relative module path. */
export async function loadEnvironment(reference: string, cwd: string, options: BuiltinEnvironmentOptions = {}): Promise<EnvironmentDefinition> {
  const builtin = createBuiltinEnvironments(options).get(reference);
  if (builtin !== undefined) return builtin;
  if (!looksLikeModule(reference)) {
    throw new ClawrlError('configuration_error', `Unknown environment '${reference}': use ${[...builtinEnvironments.keys()].join(', ')}, or a module path such as ./my-env.js.`, { param: 'env' });
  }
  const url = reference.startsWith('file:') ? reference : pathToFileURL(path.resolve(cwd, reference)).href;
  let module: Record<string, unknown>;
  try {
    module = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new ClawrlError('configuration_error', `Cannot load the environment module ${reference}: ${error instanceof Error ? error.message : String(error)}`, { param: 'env', cause: error });
  }
  const definition = module.default ?? module.environment;
  const problems = definitionProblems(definition);
  if (problems.length > 0) {
    throw new ClawrlError('configuration_error', `${reference} must export an EnvironmentDefinition as default or as 'environment': ${problems.join('; ')}.`, { param: 'env' });
  }
  return definition as EnvironmentDefinition;
}
