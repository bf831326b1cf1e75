import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveSamplingDefaults } from './sampling-defaults.js';

function modelFolder(generationConfig?: unknown): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-sampling-defaults-'));
  writeFileSync(path.join(folder, 'config.json'), '{}');
  if (generationConfig !== undefined) writeFileSync(path.join(folder, 'generation_config.json'), JSON.stringify(generationConfig));
  return folder;
}

const qwen3Like = { eos_token_id: [1, 2], do_sample: true, temperature: 0.6, top_p: 0.95, top_k: 20 };

describe('resolveSamplingDefaults', () => {
  it("takes the model folder's generation_config.json where no flag is given", async () => {
    const resolved = await resolveSamplingDefaults({ model: modelFolder(qwen3Like), maxTokens: 512, temperatureScoring: true });
    expect(resolved.defaults).toEqual({ maxTokens: 512, temperature: 0.6, topP: 0.95, topK: 20 });
    expect(resolved.sources).toEqual({ temperature: 'generation_config.json', topP: 'generation_config.json', topK: 'generation_config.json' });
  });

  it('lets flags beat the model, and a top-k of 0 turn top-k off', async () => {
    const resolved = await resolveSamplingDefaults({ model: modelFolder(qwen3Like), maxTokens: 512, temperatureScoring: true, temperature: 1, topP: 1, topK: 0 });
    expect(resolved.defaults).toEqual({ maxTokens: 512, temperature: 1, topP: 1 });
    expect(resolved.sources).toEqual({ temperature: 'flag', topP: 'flag', topK: 'flag' });
  });

  it("keeps the OpenAI API's defaults without a folder or without a generation config", async () => {
    for (const model of ['Qwen/Qwen3-4B-not-on-disk', modelFolder()]) {
      const resolved = await resolveSamplingDefaults({ model, maxTokens: 64, temperatureScoring: true });
      expect(resolved.defaults).toEqual({ maxTokens: 64, temperature: 1, topP: 1 });
      expect(resolved.sources).toEqual({ temperature: 'default', topP: 'default', topK: 'default' });
    }
  });

  it("does not take the model's temperature for an engine that scores only at 1", async () => {
    const resolved = await resolveSamplingDefaults({ model: modelFolder(qwen3Like), maxTokens: 64, temperatureScoring: false });
    expect(resolved.defaults).toEqual({ maxTokens: 64, temperature: 1, topP: 0.95, topK: 20 });
    const chosen = await resolveSamplingDefaults({ model: modelFolder(qwen3Like), maxTokens: 64, temperatureScoring: false, temperature: 0.6 });
    expect(chosen.defaults.temperature).toBe(0.6);
  });

  it('reads the built-in model as published: temperature 0.7, top_p 0.95', async () => {
    const resolved = await resolveSamplingDefaults({ model: 'builtin:tiny', maxTokens: 1024, temperatureScoring: true });
    expect(resolved.defaults).toEqual({ maxTokens: 1024, temperature: 0.7, topP: 0.95 });
  });

  it('names the folder of an invalid generation_config.json', async () => {
    const folder = modelFolder({ temperature: -1 });
    await expect(resolveSamplingDefaults({ model: folder, maxTokens: 64, temperatureScoring: true })).rejects.toThrow(folder);
  });
});
