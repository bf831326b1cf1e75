import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { writeSafetensors } from '../../model/safetensors.js';
import { readCheckpointArchive, readTarFiles } from './read-checkpoint-archive.js';
import { writeTar } from './testing/write-tar.js';

const adapter = (names: string[], config: object = { r: 2, lora_alpha: 4, target_modules: 'all-linear' }) => ({
  'adapter_config.json': new TextEncoder().encode(JSON.stringify(config)),
  'adapter_model.safetensors': writeSafetensors(new Map(names.map((name) => [name, { shape: [1, 1], data: Float32Array.of(1) }]))),
});
const dense = ['q_proj', 'gate_proj'].flatMap((module) => {
  const path = `base_model.model.model.layers.0.${module === 'q_proj' ? 'self_attn' : 'mlp'}.${module}`;
  return [`${path}.lora_A.weight`, `${path}.lora_B.weight`];
});
const configOf = (files: Record<string, Uint8Array> | null) => JSON.parse(new TextDecoder().decode(files?.['adapter_config.json'])) as Record<string, unknown>;

const padded = (data: Uint8Array) => Buffer.concat([data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
/** A GNU tar header (`ustar  ` magic), as GNU tar writes before and after a `L` long-name entry. */
function tarHeader(name: string, size: number, typeflag: string): Buffer {
  const header = Buffer.alloc(512);
  const put = (text: string, offset: number) => header.write(text, offset, 'latin1');
  put(name, 0);
  put('0000644\0', 100);
  put('0000000\0', 108);
  put('0000000\0', 116);
  put(`${size.toString(8).padStart(11, '0')}\0`, 124);
  put('00000000000\0', 136);
  put('        ', 148);
  put(typeflag, 156);
  put('ustar  \0', 257);
  put(`${header.reduce((sum, byte) => sum + byte, 0).toString(8).padStart(6, '0')}\0 `, 148);
  return header;
}

describe('Tinker checkpoint archives', () => {
  it('reads a plain tar and a gzipped one, and builds adapter_config.json from the tensor names rather than passing Tinker’s through', async () => {
    const files = adapter(dense);
    const inFolder = Object.fromEntries(Object.entries(files).map(([name, bytes]) => [`step_1/${name}`, bytes]));
    for (const gzip of [false, true]) {
      const read = await readCheckpointArchive(await writeTar(inFolder, { gzip }), 'Qwen/Qwen3-4B-Instruct-2507');
      expect(read.files?.['adapter_model.safetensors']).toEqual(files['adapter_model.safetensors']);
      expect(configOf(read.files)).toMatchObject({ peft_type: 'LORA', r: 2, lora_alpha: 4, target_modules: ['gate_proj', 'q_proj'], base_model_name_or_path: 'Qwen/Qwen3-4B-Instruct-2507', modules_to_save: null });
    }
  });

  it('reads entries whose names are longer than a ustar header holds: pax (Python’s tarfile) and GNU long names', async () => {
    const folder = `${'sampler_weights_of_a_long_training_run_'.repeat(4)}/`;
    expect(folder.length).toBeGreaterThan(100);
    const pax = await writeTar({ [`${folder}adapter_config.json`]: Uint8Array.of(123, 125) }, { gzip: true });
    expect(await readTarFiles(pax)).toEqual({ 'adapter_config.json': Uint8Array.of(123, 125) });
    const longName = new TextEncoder().encode(`${folder}adapter_model.safetensors\0`);
    const gnu = Buffer.concat([tarHeader('././@LongLink', longName.length, 'L'), padded(longName), tarHeader(`${folder}adapter_model.safetensors`.slice(0, 100), 1, '0'), padded(Uint8Array.of(7)), Buffer.alloc(1024)]);
    expect(await readTarFiles(gzipSync(gnu))).toEqual({ 'adapter_model.safetensors': Uint8Array.of(7) });
  });

  it('refuses Tinker-only module names, an adapter without rank and alpha, and what is no archive', async () => {
    const unembed = await readCheckpointArchive(await writeTar(adapter([...dense, 'base_model.model.model.unembed_tokens.lora_A.weight']), { gzip: false }), 'tiny');
    expect(unembed).toMatchObject({ files: null, reason: expect.stringContaining('unembed_tokens') });
    const noRank = await readCheckpointArchive(await writeTar(adapter(dense, { lora_alpha: 4 }), { gzip: false }), 'tiny');
    expect(noRank).toMatchObject({ files: null, reason: expect.stringContaining('r and lora_alpha') });
    expect(await readCheckpointArchive(Uint8Array.of(1, 2, 3), 'tiny')).toMatchObject({ files: null, reason: expect.stringContaining('not a tar archive') });
  });
});
