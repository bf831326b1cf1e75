/**
 * A Tinker checkpoint archive (`GET …/checkpoints/<name>/archive`, a `.tar.gz`; SkyRL's
 * `skyrl/tinker/api.py` streams one, the hosted service redirects to a signed URL) read into the
 * PEFT adapter files it holds. Only what every PEFT loader takes is passed on: `adapter_config.json`
 * of a LoRA and tensors named `base_model.model.<module>.lora_A|lora_B.weight`. Tinker names some
 * modules its own way (`unembed_tokens`, experts `w1/w2/w3`, engines.md §5.5); an archive with such
 * names is not converted here, and the caller publishes the version without PEFT files.
 */
import { gunzipSync } from 'node:zlib';
import { readSafetensors } from '../../model/safetensors.js';

const blockSize = 512;

/** Regular files of a (ustar or old-style) tar, by base name. */
export function readTarFiles(archive: Uint8Array): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  const text = (from: number, length: number) => new TextDecoder().decode(archive.subarray(from, from + length)).replace(/\0.*$/s, '');
  let offset = 0;
  while (offset + blockSize <= archive.length) {
    const name = text(offset, 100);
    if (name === '') break;
    const size = Number.parseInt(text(offset + 124, 12).trim() || '0', 8);
    const type = text(offset + 156, 1);
    const start = offset + blockSize;
    if (type === '' || type === '0') files[name.split('/').pop() ?? name] = Uint8Array.from(archive.subarray(start, start + size));
    offset = start + Math.ceil(size / blockSize) * blockSize;
  }
  return files;
}

export type AdapterFromArchive = { files: Record<string, Uint8Array> } | { files: null; reason: string };

export function readCheckpointArchive(archive: Uint8Array): AdapterFromArchive {
  let entries: Record<string, Uint8Array>;
  try {
    entries = readTarFiles(gunzipSync(archive));
  } catch (error) {
    return { files: null, reason: `not a .tar.gz: ${error instanceof Error ? error.message : String(error)}` };
  }
  const config = entries['adapter_config.json'];
  const weights = entries['adapter_model.safetensors'];
  if (config === undefined || weights === undefined) return { files: null, reason: `no adapter_config.json and adapter_model.safetensors in it (${Object.keys(entries).join(', ')})` };
  try {
    const parsed = JSON.parse(new TextDecoder().decode(config)) as { peft_type?: unknown };
    if (parsed.peft_type !== 'LORA') return { files: null, reason: `adapter_config.json has peft_type ${String(parsed.peft_type)}, not LORA` };
    const names = [...readSafetensors(weights).tensors.keys()];
    const foreign = names.filter((name) => !/^base_model\.model\.[A-Za-z0-9_.]+\.lora_[AB]\.weight$/.test(name) || /unembed|\.w[123]\./.test(name));
    if (foreign.length > 0) return { files: null, reason: `tensor names PEFT loaders do not take: ${foreign.slice(0, 3).join(', ')}` };
  } catch (error) {
    return { files: null, reason: error instanceof Error ? error.message : String(error) };
  }
  return { files: { 'adapter_config.json': config, 'adapter_model.safetensors': weights } };
}
