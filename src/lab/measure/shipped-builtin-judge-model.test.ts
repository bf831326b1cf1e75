import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildJudgePrompt } from '../../core/judge-prompts.js';
import { builtinJudgePromptBudget } from '../../builtin/builtin-judge-options.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { loadTransformerFromFolder } from '../../model/transformer.js';
import { initializeTensorBackend } from '../../tensor/index.js';
import type { JudgeExampleInput } from '../corpus/judge-task.js';

const models = path.join(import.meta.dirname, '..', '..', '..', 'models');
const folder = path.join(models, 'builtin-tiny-judge');

beforeAll(async () => {
  await initializeTensorBackend({ backend: 'wasm' });
});

async function verdictOf(input: JudgeExampleInput): Promise<string> {
  const renderer = await loadChatRenderer(folder);
  const transformer = await loadTransformerFromFolder(folder);
  try {
    const prompt = renderer.renderPrompt(buildJudgePrompt(input, builtinJudgePromptBudget), []);
    const { sequences } = await transformer.sample({ promptTokenIds: prompt, maxTokens: 60, temperature: 0, stopTokenIds: [...renderer.stopTokenIds] });
    return renderer.decode(sequences[0]?.tokenIds ?? []);
  } finally {
    transformer.dispose();
  }
}

describe('the shipped builtin:tiny-judge model', () => {
  it('is a small Hugging Face Llama folder with the built-in model\'s shape, tokenizer and its recipe', async () => {
    const weights = await stat(path.join(folder, 'model.safetensors'));
    // Each built-in folder stays under 25 MB and both under 50 MB: the judge model is a second
    // float32 copy of the 6-layer shape (22 MB), shipped so builtin:tiny has a judge trained for
    // judging alone (issue #56) without a download.
    expect(weights.size).toBeLessThanOrEqual(25 * 1024 * 1024);
    const policyWeights = await stat(path.join(models, 'builtin-tiny', 'model.safetensors'));
    expect(weights.size + policyWeights.size).toBeLessThanOrEqual(50 * 1024 * 1024);
    const config = JSON.parse(await readFile(path.join(folder, 'config.json'), 'utf8')) as Record<string, unknown>;
    const policyConfig = JSON.parse(await readFile(path.join(models, 'builtin-tiny', 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({ model_type: 'llama', tie_word_embeddings: true });
    expect(config).toEqual(policyConfig);
    expect(await readFile(path.join(folder, 'tokenizer.json'), 'utf8')).toBe(await readFile(path.join(models, 'builtin-tiny', 'tokenizer.json'), 'utf8'));
    const recipe = JSON.parse(await readFile(path.join(folder, 'pretrain-recipe.json'), 'utf8')) as { recipe: Record<string, unknown> };
    // Trained on the judge-only corpus, from the built-in model or an earlier stage of itself.
    expect(recipe.recipe).toMatchObject({ corpus: 'judge' });
    expect(recipe.recipe.from).toMatch(/^models\/builtin-tiny(-judge)?$/);
  });

  // Tool results are left out: the shipped weights read them unreliably (held-out successes 5 of 20
  // right; an error outside the held-out set, "Cannot find module", read as success; docs/results.md).
  it('loads and reads a plain correction as −1 and thanks as +1', async () => {
    const correction = await verdictOf({
      context: [{ role: 'user', content: 'What is 8 + 5?' }],
      response: { role: 'assistant', content: '8 + 5 = 14.' },
      nextState: [{ role: 'user', content: 'Wrong, that should be 13. Try again.' }],
    });
    expect(correction).toMatch(/\\boxed\{-1\}/);
    const thanks = await verdictOf({
      context: [{ role: 'user', content: 'What is 8 + 5?' }],
      response: { role: 'assistant', content: '8 + 5 = 13.' },
      nextState: [{ role: 'user', content: 'Right, thanks a lot for the help.' }],
    });
    expect(thanks).toMatch(/\\boxed\{1\}/);
  });
});
