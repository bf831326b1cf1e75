import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinModelDirectory, localModelDirectoryOf, modelFolderOf } from './create-inference-engine.js';

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
