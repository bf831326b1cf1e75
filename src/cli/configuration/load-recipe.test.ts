import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultRecipeFileOf, defaultRolloutRecipeFileOf, loadRecipe } from './load-recipe.js';

describe('the recipes a model folder ships', () => {
  let folder: string | undefined;
  afterEach(() => {
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it('gives builtin:tiny a LoRA recipe for rollouts and keeps its full-parameter one for live traffic', () => {
    const live = loadRecipe(defaultRecipeFileOf('builtin:tiny') ?? '');
    const rollout = loadRecipe(defaultRolloutRecipeFileOf('builtin:tiny') ?? '');
    expect(live).toMatchObject({ trainParams: 'full', learningRate: 0.001 });
    expect(rollout).toMatchObject({ trainParams: 'lora', learningRate: 0.002, anchorCoefficient: 0.5 });
  });

  it('falls back to the folder\'s recipe.json for rollouts, and to none without one', () => {
    folder = mkdtempSync(path.join(tmpdir(), 'clawrl-recipe-'));
    writeFileSync(path.join(folder, 'config.json'), '{}');
    expect(defaultRolloutRecipeFileOf(folder)).toBeUndefined();
    writeFileSync(path.join(folder, 'recipe.json'), JSON.stringify({ trainParams: 'lora' }));
    expect(defaultRolloutRecipeFileOf(folder)).toBe(path.join(folder, 'recipe.json'));
  });
});
