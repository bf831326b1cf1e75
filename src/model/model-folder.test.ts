import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import { loadModelFolder } from './model-folder.js';

const chatmlFixture = fileURLToPath(new URL('./__fixtures__/chatml-model', import.meta.url));
const llamaFixture = fileURLToPath(new URL('./__fixtures__/llama3-model', import.meta.url));

let folder: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'clawrl-model-folder-'));
  await cp(chatmlFixture, folder, { recursive: true });
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function errorOf(promise: Promise<unknown>): Promise<ClawrlError> {
  try {
    await promise;
  } catch (error) {
    if (ClawrlError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ClawrlError');
}

async function editJson(file: string, edit: (value: Record<string, unknown>) => void): Promise<void> {
  const value = JSON.parse(await readFile(join(folder, file), 'utf8')) as Record<string, unknown>;
  edit(value);
  await writeFile(join(folder, file), JSON.stringify(value));
}

describe('loadModelFolder', () => {
  it('reads the fixture folder without weights when they are not required', async () => {
    const model = await loadModelFolder(chatmlFixture, { requireWeights: false });
    expect(model.directory).toBe(chatmlFixture);
    expect(model.config.family).toBe('qwen2');
    expect(model.tokenizerConfig.eosToken).toBe('<|im_end|>');
    expect(model.chatTemplate).toContain('<|im_start|>');
    expect(model.toolUseChatTemplate).toBeNull();
    expect(model.generationConfig?.eosTokenIds).toHaveLength(2);
    expect(model.weightFiles).toEqual([]);
    expect(model.tokenizerJson).toMatchObject({ model: { type: 'BPE' } });
  });

  it('reads a Llama 3 folder without generation_config.json', async () => {
    const model = await loadModelFolder(llamaFixture, { requireWeights: false });
    expect(model.config.ropeScaling?.type).toBe('llama3');
    expect(model.generationConfig).toBeNull();
    expect(model.tokenizerConfig.bosToken).toBe('<|begin_of_text|>');
  });

  it('requires weights by default and names the missing file', async () => {
    const error = await errorOf(loadModelFolder(folder));
    expect(error.code).toBe('configuration_error');
    expect(error.message).toContain('missing model.safetensors');
  });

  it('points out a pytorch_model.bin it cannot read', async () => {
    await writeFile(join(folder, 'pytorch_model.bin'), 'x');
    expect((await errorOf(loadModelFolder(folder))).message).toContain('pytorch_model.bin is not supported');
  });

  it('finds a single model.safetensors', async () => {
    await writeFile(join(folder, 'model.safetensors'), '');
    expect((await loadModelFolder(folder)).weightFiles).toEqual([join(folder, 'model.safetensors')]);
  });

  it('lists the shards of a sharded checkpoint once each, in order', async () => {
    const shards = ['model-00002-of-00002.safetensors', 'model-00001-of-00002.safetensors'];
    await writeFile(
      join(folder, 'model.safetensors.index.json'),
      JSON.stringify({
        metadata: { total_size: 10 },
        weight_map: { 'lm_head.weight': shards[0], 'model.norm.weight': shards[0], 'model.embed_tokens.weight': shards[1] },
      }),
    );
    for (const shard of shards) await writeFile(join(folder, shard), '');
    expect((await loadModelFolder(folder)).weightFiles).toEqual([
      join(folder, 'model-00001-of-00002.safetensors'),
      join(folder, 'model-00002-of-00002.safetensors'),
    ]);
  });

  it('names a shard the index lists but the folder lacks', async () => {
    await writeFile(
      join(folder, 'model.safetensors.index.json'),
      JSON.stringify({ weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' } }),
    );
    await writeFile(join(folder, 'model-00001-of-00002.safetensors'), '');
    const error = await errorOf(loadModelFolder(folder));
    expect(error.message).toContain('missing weight shard model-00002-of-00002.safetensors');
  });

  it('rejects an index without a weight map', async () => {
    await writeFile(join(folder, 'model.safetensors.index.json'), JSON.stringify({ metadata: {} }));
    expect((await errorOf(loadModelFolder(folder))).param).toBe('weight_map');
  });

  it.each(['config.json', 'tokenizer.json', 'tokenizer_config.json'])('names a missing %s', async (file) => {
    await rm(join(folder, file));
    const error = await errorOf(loadModelFolder(folder, { requireWeights: false }));
    expect(error.message).toContain(`missing ${file}`);
    expect(error.param).toBe(file);
  });

  it('names a file that is not valid JSON', async () => {
    await writeFile(join(folder, 'config.json'), '{ nope');
    expect((await errorOf(loadModelFolder(folder, { requireWeights: false }))).message).toContain(
      'config.json is not valid JSON',
    );
  });

  it('passes on the field a config file gets wrong, with the folder', async () => {
    await editJson('config.json', (config) => delete config.num_hidden_layers);
    const error = await errorOf(loadModelFolder(folder, { requireWeights: false }));
    expect(error.param).toBe('num_hidden_layers');
    expect(error.message).toContain(folder);
  });

  it('rejects a folder that does not exist', async () => {
    const error = await errorOf(loadModelFolder(join(folder, 'absent')));
    expect(error.message).toContain('does not exist');
  });

  it('prefers chat_template.jinja over tokenizer_config.json', async () => {
    await writeFile(join(folder, 'chat_template.jinja'), 'from jinja');
    expect((await loadModelFolder(folder, { requireWeights: false })).chatTemplate).toBe('from jinja');
  });

  it('reads chat_template.json when there is no .jinja file', async () => {
    await writeFile(join(folder, 'chat_template.json'), JSON.stringify({ chat_template: 'from json' }));
    expect((await loadModelFolder(folder, { requireWeights: false })).chatTemplate).toBe('from json');
  });

  it('picks default and keeps tool_use from the list form of chat_template', async () => {
    await editJson('tokenizer_config.json', (config) => {
      config.chat_template = [
        { name: 'tool_use', template: 'tools' },
        { name: 'default', template: 'plain' },
        { name: 'rag', template: 'rag' },
      ];
    });
    const model = await loadModelFolder(folder, { requireWeights: false });
    expect(model.chatTemplate).toBe('plain');
    expect(model.toolUseChatTemplate).toBe('tools');
  });

  it('reads a tool_use template from additional_chat_templates', async () => {
    await mkdir(join(folder, 'additional_chat_templates'));
    await writeFile(join(folder, 'additional_chat_templates', 'tool_use.jinja'), 'extra tools');
    expect((await loadModelFolder(folder, { requireWeights: false })).toolUseChatTemplate).toBe('extra tools');
  });

  it('returns a null template for a base model without one', async () => {
    await editJson('tokenizer_config.json', (config) => delete config.chat_template);
    expect((await loadModelFolder(folder, { requireWeights: false })).chatTemplate).toBeNull();
  });
});
