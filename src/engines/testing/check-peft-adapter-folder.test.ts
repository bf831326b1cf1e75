import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeSafetensors } from '../../model/safetensors.js';
import { checkModelFolder, checkPeftAdapterFolder, readSafetensorsHeader } from './check-peft-adapter-folder.js';
import { createPeftAdapterFiles } from './create-peft-adapter-files.js';
import { startFakeVllmServer, type FakeVllmServer } from './fake-vllm-server.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function folderWith(files: Record<string, Uint8Array | string>): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'clawrl-check-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  await Promise.all(Object.entries(files).map(([name, bytes]) => writeFile(join(folder, name), bytes)));
  return folder;
}

const valid = () => createPeftAdapterFiles({ baseModel: 'base' });
function withConfig(change: Record<string, unknown>): Record<string, Uint8Array | string> {
  const files = valid();
  const config = { ...(JSON.parse(new TextDecoder().decode(files['adapter_config.json'])) as Record<string, unknown>), ...change };
  return { ...files, 'adapter_config.json': JSON.stringify(config) };
}
function withTensors(tensors: [string, number[]][]): Record<string, Uint8Array | string> {
  const map = new Map(tensors.map(([name, shape]) => [name, { shape, data: new Float32Array(shape.reduce((a, b) => a * b, 1)) }]));
  return { ...valid(), 'adapter_model.safetensors': writeSafetensors(map) };
}
const a = 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight';
const b = 'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight';

describe('checkPeftAdapterFolder: what the fake servers accept as an adapter', () => {
  it('accepts what PEFT writes', async () => {
    expect(await checkPeftAdapterFolder(await folderWith(valid()), 'base')).toBeNull();
  });

  it.each([
    ['a folder without adapter_config.json', { 'adapter_model.safetensors': valid()['adapter_model.safetensors'] ?? '' }, /No adapter found/],
    ['a config that is not JSON', { ...valid(), 'adapter_config.json': '{r:' }, /not JSON/],
    ['another peft_type', withConfig({ peft_type: 'IA3' }), /peft_type must be LORA/],
    ['no rank', withConfig({ r: undefined }), /r must be a positive integer/],
    ['no lora_alpha', withConfig({ lora_alpha: undefined }), /lora_alpha is required/],
    ['no target_modules', withConfig({ target_modules: [] }), /target_modules is required/],
    ['modules_to_save', withConfig({ modules_to_save: ['lm_head'] }), /modules_to_save/],
    ['DoRA', withConfig({ use_dora: true }), /DoRA/],
    ['another base model', withConfig({ base_model_name_or_path: 'other' }), /is not the served model "base"/],
    ['no weights', { 'adapter_config.json': valid()['adapter_config.json'] ?? '' }, /adapter_model.safetensors is missing/],
    ['a truncated safetensors file', { ...valid(), 'adapter_model.safetensors': new Uint8Array([200, 0, 0, 0, 0, 0, 0, 0, 123]) }, /does not fit the file/],
    ['tensors PEFT does not name', withTensors([['model.layers.0.self_attn.q_proj.weight', [4, 8]]]), /unexpected tensor/],
    ['a module outside target_modules', withTensors([[a.replace('q_proj', 'o_proj'), [4, 8]], [b.replace('q_proj', 'o_proj'), [8, 4]]]), /not in target_modules/],
    ['lora_A without lora_B', withTensors([[a, [4, 8]]]), /needs both lora_A and lora_B/],
    ['shapes that do not match the rank', withTensors([[a, [2, 8]], [b, [8, 2]]]), /not \[4, in\] \/ \[out, 4\]/],
  ])('rejects %s', async (_label, files, reason) => {
    expect(await checkPeftAdapterFolder(await folderWith(files), 'base')).toMatch(reason);
  });

  it('reads the safetensors header on its own: offsets must match shapes', () => {
    const header = new TextEncoder().encode(JSON.stringify({ x: { dtype: 'F32', shape: [2], data_offsets: [0, 4] } }));
    const bytes = new Uint8Array(8 + header.length + 8);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
    bytes.set(header, 8);
    expect(readSafetensorsHeader(bytes)).toMatch(/do not match its shape/);
  });
});

describe('checkModelFolder: what the fake SGLang accepts for /update_weights_from_disk', () => {
  it('needs config.json and readable safetensors weights', async () => {
    const weights = writeSafetensors(new Map([['w', { shape: [1], data: new Float32Array(1) }]]));
    expect(await checkModelFolder(await folderWith({ 'config.json': '{}', 'model.safetensors': weights }))).toBeNull();
    expect(await checkModelFolder(await folderWith({ 'model.safetensors': weights }))).toMatch(/config.json cannot be read/);
    expect(await checkModelFolder(await folderWith({ 'config.json': '{}' }))).toMatch(/no \*.safetensors/);
    expect(await checkModelFolder(await folderWith({ 'config.json': '{}', 'model.safetensors': new Uint8Array(3) }))).toMatch(/shorter/);
  });
});

describe('the fake servers refuse a malformed adapter as the real ones do', () => {
  async function start(mode: 'vllm' | 'sglang'): Promise<FakeVllmServer> {
    const server = await startFakeVllmServer({ mode, model: 'base' });
    cleanups.push(() => server.close());
    return server;
  }
  async function post(server: FakeVllmServer, path: string, body: unknown): Promise<{ status: number; text: string }> {
    const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, text: await response.text() };
  }

  it('vLLM: 400 with its error JSON for a bad adapter, 200 text for a good one, 400 for a second load of the name', async () => {
    const server = await start('vllm');
    const bad = await post(server, '/v1/load_lora_adapter', { lora_name: 'x', lora_path: await folderWith(withConfig({ r: 0 })) });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toEqual({ error: { message: 'adapter_config.json: r must be a positive integer', type: 'BadRequestError', param: null, code: 400 } });
    const path = await folderWith(valid());
    expect(await post(server, '/v1/load_lora_adapter', { lora_name: 'x', lora_path: path })).toEqual({ status: 200, text: "Success: LoRA adapter 'x' added successfully." });
    expect((await post(server, '/v1/load_lora_adapter', { lora_name: 'x', lora_path: path })).text).toContain("The lora adapter 'x' has already been loaded.");
    await post(server, '/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'hi' }] });
    expect(server.requests.at(-1)?.served).toBe('x');
  });

  it('SGLang: 400 with {success: false, error_message} for a bad adapter', async () => {
    const server = await start('sglang');
    const bad = await post(server, '/load_lora_adapter', { lora_name: 'x', lora_path: await folderWith(withConfig({ base_model_name_or_path: 'other' })) });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({ success: false, error_message: expect.stringContaining('is not the served model') as unknown, loaded_adapters: {} });
    const good = await post(server, '/load_lora_adapter', { lora_name: 'x', lora_path: await folderWith(valid()) });
    expect(JSON.parse(good.text)).toMatchObject({ success: true, loaded_adapters: { x: expect.any(String) as unknown } });
    await post(server, '/generate', { input_ids: [5, 6], lora_path: 'x', sampling_params: { max_new_tokens: 2 } });
    expect(server.requests.at(-1)).toMatchObject({ served: 'x', weightVersion: 'default' });
  });
});
