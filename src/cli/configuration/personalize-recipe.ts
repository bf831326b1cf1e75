/**
 * The experiment knobs of `clawrl eval personalize`: one flag per recipe setting, derived from
 * `recipeSettings`, so the ablation knobs live in the experiment and not on `serve`. The
 * experiment writes them, over the model's own recipe and its defaults, into a recipe file in
 * the server's data folder and starts `serve --recipe` with it. `--judge-rules user:<user>` (an
 * oracle judge that knows the simulated user's rules) becomes a rules-judge spec file there.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { loadSimulatedUser } from '../../lab/personalize/load-simulated-user.js';
import { rulesJudgeSpecForUser } from '../../builtin/user-preference.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { recipeSettings, withoutDefaults, type Recipe, type RecipeSettings } from './configuration-schema.js';
import { defaultRecipeFileOf, loadRecipe } from './load-recipe.js';

/** OpenClaw-RL v2's support set and leave-one-out rewards: the experiment's defaults for any model without a recipe of its own. */
export const experimentRecipeDefaults: Partial<RecipeSettings> = { opdSupportK: 4, rewardBaseline: 'batch' };
export const defaultExperimentTrainEvery = 4;

type SettingKey = keyof RecipeSettings;
const settingKeys = Object.keys(recipeSettings.shape).filter((key): key is SettingKey => Object.hasOwn(recipeSettings.shape, key));

function flagNameOf(key: string): string {
  return key.replaceAll(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

function kindOf(key: SettingKey): 'boolean' | 'number' | 'string' {
  const sample = recipeSettings.shape[key].safeParse(undefined);
  const value = sample.success ? sample.data : 1;
  return typeof value === 'boolean' ? 'boolean' : typeof value === 'string' ? 'string' : 'number';
}

/** The model's recipe (its folder's recipe.json), or none. */
export function modelRecipeOf(model: string): Recipe {
  const file = defaultRecipeFileOf(model);
  return file === undefined ? {} : loadRecipe(file);
}

/** The recipe settings the experiment's server uses by default for this model. */
export function experimentSettingsOf(model: string): RecipeSettings {
  const recipe = modelRecipeOf(model);
  const fromRecipe = Object.fromEntries(settingKeys.flatMap((key) => (recipe[key] === undefined ? [] : [[key, recipe[key]]])));
  return recipeSettings.parse({ ...experimentRecipeDefaults, ...fromRecipe });
}

/** Adds a flag per recipe setting, with the default the experiment really uses. */
export function addExperimentOptions(command: Command): Command {
  const builtin = experimentSettingsOf('builtin:tiny');
  const other = recipeSettings.parse(experimentRecipeDefaults);
  for (const key of settingKeys) {
    const kind = kindOf(key);
    const description = recipeSettings.shape[key].description ?? key;
    const shown = (value: unknown) => (value === undefined ? 'unset' : JSON.stringify(value));
    const defaults = kind === 'boolean' ? '' : ` (default: builtin:tiny ${shown(builtin[key])}, from its recipe; another model ${shown(other[key])})`;
    command.addOption(new Option(kind === 'boolean' ? `--${flagNameOf(key)}` : `--${flagNameOf(key)} <value>`, `experiment knob, for the server it starts: ${description}${defaults}`));
  }
  command.addOption(
    new Option('--judge-rules <spec>', "what --judge rules judges by, for the server it starts: a rules-judge spec file, or user:<student|ta|teacher|user.json> for that simulated user's own rules and hint (an oracle)"),
  );
  return command;
}

/** The knobs the user typed, validated by the recipe schema. */
export function experimentKnobsOf(values: Record<string, unknown>): Partial<RecipeSettings> {
  const given = Object.fromEntries(
    settingKeys.flatMap((key) => {
      const value = values[key];
      if (value === undefined) return [];
      return [[key, typeof value === 'string' && kindOf(key) === 'number' ? Number(value) : value]];
    }),
  );
  const parsed = withoutDefaults(recipeSettings).safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ClawrlError('configuration_error', `--${flagNameOf(String(issue?.path[0] ?? ''))}: ${issue?.message ?? 'invalid value'}.`);
  }
  return Object.fromEntries(Object.entries(parsed.data).filter(([, value]) => value !== undefined));
}

/** Writes the server's recipe into its data folder; returns the file. */
export function writeExperimentRecipe(data: string, model: string, knobs: Partial<RecipeSettings>): string {
  const file = path.join(data, 'experiment-recipe.json');
  const recipe: Recipe = { description: 'written by clawrl eval personalize', ...experimentSettingsOf(model), ...knobs };
  writeFileSync(file, `${JSON.stringify(recipe, null, 2)}\n`);
  return file;
}

/** `user:<user>` becomes that user's rules-judge spec in the data folder; a spec file passes as it is. */
export function judgeRulesFileOf(data: string, reference: string | undefined): string | undefined {
  if (reference === undefined || !reference.startsWith('user:')) return reference;
  const file = path.join(data, 'judge-rules.json');
  writeFileSync(file, `${JSON.stringify(rulesJudgeSpecForUser(loadSimulatedUser(reference.slice('user:'.length))), null, 2)}\n`);
  return file;
}
