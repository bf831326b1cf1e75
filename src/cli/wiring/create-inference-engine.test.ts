import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTinyModelFolder } from '../../engines/local/testing/create-tiny-model-folder.js';
import { createPeftAdapterFiles } from '../../engines/testing/create-peft-adapter-files.js';
import { startFakeVllmServer } from '../../engines/testing/fake-vllm-server.js';
import { configurationSections } from '../configuration/configuration-schema.js';
import { resolveConfiguration } from '../configuration/configuration.js';
import { builtinModelDirectory, createInferenceEngine, localModelDirectoryOf, modelFolderOf } from './create-inference-engine.js';

describe('the model folder of --model', () => {
  it('is the shipped folder for builtin:tiny and the resolved path for a folder holding config.json', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'clawrl-model-folder-'));
    writeFileSync(path.join(folder, 'config.json'), '{}');
    expect(modelFolderOf('builtin:tiny')).toBe(builtinModelDirectory);
    expect(localModelDirectoryOf('builtin:tiny')).toBe(builtinModelDirectory);
    expect(localModelDirectoryOf(folder)).toBe(path.resolve(folder));
  });

  it('is null for a served model name, and the local engine refuses it with the reason', () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'clawrl-model-folder-'));
    expect(modelFolderOf('Qwen/Qwen3-4B')).toBeNull();
    expect(modelFolderOf(empty)).toBeNull();
    expect(() => localModelDirectoryOf(empty)).toThrow('is not a Hugging Face model folder');
    expect(() => localModelDirectoryOf('builtin:huge')).toThrow("Unknown built-in model 'builtin:huge'");
  });
});

describe('createInferenceEngine --engine sglang', () => {
  it('loads versions with CLAWRL_UPSTREAM_ADMIN_API_KEY where SGLang has --api-key and --admin-api-key, and generates with the API key', async () => {
    const folder = createTinyModelFolder();
    const adapterDir = mkdtempSync(path.join(tmpdir(), 'clawrl-adapter-dir-'));
    const upstream = await startFakeVllmServer({ mode: 'sglang', model: path.basename(folder), apiKey: 'user-key', adminApiKey: 'admin-key' });
    const { configuration } = resolveConfiguration(configurationSections.engine, {
      flags: { engine: 'sglang', upstream: upstream.url, model: folder, adapterDir },
      file: {},
      environment: { CLAWRL_UPSTREAM_API_KEY: 'user-key', CLAWRL_UPSTREAM_ADMIN_API_KEY: 'admin-key' },
    });
    const engine = await createInferenceEngine(configuration);
    try {
      await engine.loadPolicy({ version: 1, kind: 'adapter', files: createPeftAdapterFiles({ baseModel: path.basename(folder), seed: 1 }) });
      expect([...upstream.adapters.keys()]).toHaveLength(1);
    } finally {
      await engine.close();
      await upstream.close();
      for (const directory of [folder, adapterDir]) rmSync(directory, { recursive: true, force: true });
    }
  });
});
