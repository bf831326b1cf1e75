import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { loadTransformerFromFolder } from '../../model/transformer.js';
import { initializeTensorBackend } from '../../tensor/index.js';
import { corpusFingerprint } from '../../lab/pretrain/run-pretraining.js';
import { runPretrainTinyCommand } from './pretrain-tiny-command.js';

// Worker threads run compiled JavaScript: the suite builds dist/ before the tests.
const workerUrl = new URL(path.join('..', '..', '..', 'dist', 'lab', 'pretrain', 'pretrain-worker.js'), import.meta.url);
const quiet = (): void => undefined;
let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'clawrl-pretrain-'));
  await initializeTensorBackend({ backend: 'wasm' });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('runPretrainTinyCommand --tiny', () => {
  it('writes a model folder that loads, with a decreasing loss', async () => {
    const out = path.join(root, 'full');
    const summary = await runPretrainTinyCommand({ out, resume: false, tiny: true, steps: 20, workerUrl, log: quiet });
    expect(summary.steps).toBe(20);
    const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
    expect(mean(summary.losses.slice(-5))).toBeLessThan(mean(summary.losses.slice(0, 5)) - 0.5);
    const config = JSON.parse(await readFile(path.join(out, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({ model_type: 'llama', tie_word_embeddings: true, max_position_embeddings: 1024 });
    const renderer = await loadChatRenderer(out);
    const transformer = await loadTransformerFromFolder(out);
    try {
      const prompt = renderer.renderPrompt([{ role: 'user', content: 'Mia has 3 apples.' }], []);
      const { sequences } = await transformer.sample({ promptTokenIds: prompt, maxTokens: 8, temperature: 1, seed: 1, stopTokenIds: [...renderer.stopTokenIds] });
      expect(sequences[0]?.tokenIds.length).toBeGreaterThan(0);
      expect(renderer.stopTokenIds).toContain(config.eos_token_id);
    } finally {
      transformer.dispose();
    }
  });

  it('resumes from its checkpoint to exactly the weights of an uninterrupted run', async () => {
    const straight = path.join(root, 'straight');
    const split = path.join(root, 'split');
    await runPretrainTinyCommand({ out: straight, resume: false, tiny: true, steps: 8, workerUrl, log: quiet });
    const firstPart = await runPretrainTinyCommand({ out: split, resume: false, tiny: true, steps: 8, stopAtStep: 3, workerUrl, log: quiet });
    expect(firstPart.steps).toBe(3);
    const secondPart = await runPretrainTinyCommand({ out: split, resume: true, tiny: true, workerUrl, log: quiet });
    expect(secondPart.steps).toBe(8);
    expect(secondPart.losses).toHaveLength(5);
    const straightWeights = await readFile(path.join(straight, 'model.safetensors'));
    const splitWeights = await readFile(path.join(split, 'model.safetensors'));
    expect(Buffer.compare(straightWeights, splitWeights)).toBe(0);
  });

  it('continues from a model folder with --from: same tokenizer, a lower starting loss than random weights', async () => {
    const base = path.join(root, 'full');
    const continued = path.join(root, 'continued');
    const fresh = await runPretrainTinyCommand({ out: path.join(root, 'fresh'), resume: false, tiny: true, steps: 2, seed: 'other', workerUrl, log: quiet });
    const summary = await runPretrainTinyCommand({ out: continued, resume: false, tiny: true, steps: 2, seed: 'other', from: base, workerUrl, log: quiet });
    expect(summary.losses[0]).toBeLessThan((fresh.losses[0] ?? 0) - 0.5);
    expect(await readFile(path.join(continued, 'tokenizer.json'), 'utf8')).toBe(await readFile(path.join(base, 'tokenizer.json'), 'utf8'));
    const state = JSON.parse(await readFile(path.join(continued, 'checkpoint', 'state.json'), 'utf8')) as { recipe: { from?: string } };
    expect(state.recipe.from).toBe(base);
    expect(() => runPretrainTinyCommand({ out: continued, resume: true, from: base, tiny: true, workerUrl, log: quiet })).toThrow(/--from/);
  });

  it('grows a --from model with --layers: the grown model starts at the smaller one\'s loss and is written with the new depth', async () => {
    const base = path.join(root, 'full');
    const same = await runPretrainTinyCommand({ out: path.join(root, 'same-depth'), resume: false, tiny: true, steps: 1, seed: 'grow', from: base, workerUrl, log: quiet });
    const grown = path.join(root, 'grown');
    const summary = await runPretrainTinyCommand({ out: grown, resume: false, tiny: true, steps: 1, seed: 'grow', from: base, layers: 3, workerUrl, log: quiet });
    expect(summary.losses[0]).toBeCloseTo(same.losses[0] ?? Number.NaN, 4);
    const config = JSON.parse(await readFile(path.join(grown, 'config.json'), 'utf8')) as { num_hidden_layers: number };
    expect(config.num_hidden_layers).toBe(3);
    expect(() => runPretrainTinyCommand({ out: grown, resume: true, tiny: true, layers: 3, workerUrl, log: quiet })).toThrow(/--layers/);
  });

  it('names its corpus in the checkpoint and the model folder, and refuses to resume on a different corpus', async () => {
    const out = path.join(root, 'fingerprint');
    await runPretrainTinyCommand({ out, resume: false, tiny: true, steps: 3, stopAtStep: 1, workerUrl, log: quiet });
    const statePath = path.join(out, 'checkpoint', 'state.json');
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as { recipe: { corpusFingerprint?: string } };
    expect(state.recipe.corpusFingerprint).toMatch(/^[0-9a-f]{16}$/);
    // As if the corpus generator had changed since the checkpoint was written.
    writeFileSync(statePath, JSON.stringify({ ...state, recipe: { ...state.recipe, corpusFingerprint: '0123456789abcdef' } }));
    await expect(runPretrainTinyCommand({ out, resume: true, tiny: true, workerUrl, log: quiet })).rejects.toThrow(/corpus generator changed/);
    writeFileSync(statePath, JSON.stringify(state));
    await runPretrainTinyCommand({ out, resume: true, tiny: true, workerUrl, log: quiet });
    const written = JSON.parse(readFileSync(path.join(out, 'pretrain-recipe.json'), 'utf8')) as { recipe: { corpusFingerprint: string }; steps: number };
    expect(written).toMatchObject({ recipe: { corpusFingerprint: state.recipe.corpusFingerprint }, steps: 3 });
  });

  it('rejects a non-positive step count and a judge or hint share outside 0–1', () => {
    expect(() => runPretrainTinyCommand({ out: path.join(root, 'bad'), resume: false, tiny: true, steps: 0, workerUrl, log: quiet })).toThrow(/--steps/);
    expect(() => runPretrainTinyCommand({ out: path.join(root, 'bad'), resume: false, tiny: true, judgeShare: 1.5, workerUrl, log: quiet })).toThrow(/--judge-share/);
    expect(() => runPretrainTinyCommand({ out: path.join(root, 'bad'), resume: false, tiny: true, hintShare: -0.1, workerUrl, log: quiet })).toThrow(/--hint-share/);
    expect(() => runPretrainTinyCommand({ out: path.join(root, 'bad'), resume: false, tiny: true, brokenReplyShare: 2, workerUrl, log: quiet })).toThrow(/--broken-reply-share/);
  });

  it('records --judge-share, --hint-share and --broken-reply-share in the recipe, so a resumed run keeps the mix', async () => {
    const out = path.join(root, 'judge-heavy');
    await runPretrainTinyCommand({ out, resume: false, tiny: true, steps: 2, judgeShare: 0.8, hintShare: 0.9, brokenReplyShare: 0.1, from: path.join(root, 'full'), workerUrl, log: quiet });
    const state = JSON.parse(await readFile(path.join(out, 'checkpoint', 'state.json'), 'utf8')) as { recipe: Parameters<typeof corpusFingerprint>[0] };
    expect(state.recipe.judgeShare).toBe(0.8);
    expect(state.recipe.hintShare).toBe(0.9);
    // The share is part of the corpus: the same recipe without it names another corpus.
    const { brokenReplyShare, ...withoutShare } = state.recipe;
    expect(brokenReplyShare).toBe(0.1);
    expect(corpusFingerprint(state.recipe)).toBe(state.recipe.corpusFingerprint);
    expect(corpusFingerprint(withoutShare)).not.toBe(state.recipe.corpusFingerprint);
  });

  it('--corpus judge trains on the judge-only corpus, records it in the recipe and resumes on it', async () => {
    const out = path.join(root, 'judge-only');
    await runPretrainTinyCommand({ out, resume: false, tiny: true, steps: 4, stopAtStep: 2, corpus: 'judge', from: path.join(root, 'full'), workerUrl, log: quiet });
    const state = JSON.parse(await readFile(path.join(out, 'checkpoint', 'state.json'), 'utf8')) as { recipe: Parameters<typeof corpusFingerprint>[0] };
    expect(state.recipe.corpus).toBe('judge');
    const { corpus, ...shared } = state.recipe;
    expect(corpus).toBe('judge');
    expect(corpusFingerprint(shared)).not.toBe(state.recipe.corpusFingerprint);
    const resumed = await runPretrainTinyCommand({ out, resume: true, tiny: true, workerUrl, log: quiet });
    expect(resumed.steps).toBe(4);
    expect(() => runPretrainTinyCommand({ out: path.join(root, 'bad'), resume: false, tiny: true, corpus: 'judge', judgeShare: 0.5, workerUrl, log: quiet })).toThrow(/--corpus judge/);
  });
});
