/**
 * Reads a recipe file (`--recipe`, `CLAWRL_RECIPE`, key `recipe`): how a model learns, validated
 * by `recipeSchema`. Without one, a model folder's own `recipe.json` applies, so `builtin:tiny`
 * trains with `models/builtin-tiny/recipe.json`, the settings it was shown to learn with.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { recipeSchema, type Recipe } from './configuration-schema.js';
import { modelFolderOf } from '../wiring/create-inference-engine.js';

export function loadRecipe(file: string): Recipe {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ClawrlError('configuration_error', `Cannot read the recipe ${file} (--recipe, CLAWRL_RECIPE): ${(error as Error).message}`, { param: 'recipe', cause: error });
  }
  const result = recipeSchema.safeParse(parsed);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new ClawrlError('configuration_error', `The recipe ${file} is not valid: ${issues.join('; ')}`, { param: 'recipe' });
  }
  return result.data;
}

/** The file `name` of the model folder `--model` names, when the folder has it. */
function modelFolderFileOf(model: string, name: string): string | undefined {
  const folder = modelFolderOf(model);
  if (folder === null) return undefined;
  const file = path.join(folder, name);
  return existsSync(file) ? file : undefined;
}

/** The model folder's `recipe.json`, when `--model` names a folder that has one. */
export function defaultRecipeFileOf(model: string): string | undefined {
  return modelFolderFileOf(model, 'recipe.json');
}

/**
 * The recipe `clawrl rollout` gives the server it starts: the model folder's `rollout-recipe.json`
 * when it has one (the built-in model's full-parameter steps at 1e-3 suit a user's preference but
 * wreck its arithmetic within 5 rollout steps, docs/results.md), else its `recipe.json`.
 */
export function defaultRolloutRecipeFileOf(model: string): string | undefined {
  return modelFolderFileOf(model, 'rollout-recipe.json') ?? defaultRecipeFileOf(model);
}
