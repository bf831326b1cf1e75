/**
 * A Tinker checkpoint archive read into the PEFT adapter files engines load. The archive is a tar,
 * gzipped (SkyRL's `.tar.gz`) or plain (tinker-cookbook saves the hosted one as `.tar` and lets
 * `tarfile.open(…, "r")` detect compression, `weights/_download.py`), told apart by gzip's magic
 * bytes; `tar-stream` reads it, pax and GNU long names included (Python's `tarfile` writes pax).
 *
 * Only what every PEFT loader takes is passed on: tensors named `base_model.model.<module>.lora_A|B.weight`,
 * and an `adapter_config.json` built here, as tinker-cookbook's `weights/_adapter.py`
 * `_build_peft_config` builds it: `r` and `lora_alpha` from the archive's config, `target_modules` the
 * leaf names of the modules the tensors adapt (Tinker's own config is not passed through). Tinker
 * names some modules its own way (`unembed_tokens`, experts `w1/w2/w3`, engines.md §5.5); an
 * archive with such names is not converted, and the caller publishes the version without PEFT files.
 */
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { readSafetensors } from '../../model/safetensors.js';

/** Regular files of a tar (gzipped or not), by base name. */
export async function readTarFiles(archive: Uint8Array): Promise<Record<string, Uint8Array>> {
  const tar = archive[0] === 0x1f && archive[1] === 0x8b ? gunzipSync(archive) : archive;
  const files: Record<string, Uint8Array> = {};
  const extractor = extract();
  extractor.end(Buffer.from(tar.buffer, tar.byteOffset, tar.byteLength));
  for await (const entry of extractor) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    const { name, type } = entry.header;
    if (type === 'file' || type === 'contiguous-file') files[name.split('/').pop() ?? name] = new Uint8Array(Buffer.concat(chunks));
  }
  return files;
}

export type AdapterFromArchive = { files: Record<string, Uint8Array> } | { files: null; reason: string };

const peftTensorName = /^base_model\.model\.([A-Za-z0-9_.]+)\.lora_[AB]\.weight$/;

export async function readCheckpointArchive(archive: Uint8Array, baseModel: string): Promise<AdapterFromArchive> {
  let entries: Record<string, Uint8Array>;
  try {
    entries = await readTarFiles(archive);
  } catch (error) {
    return { files: null, reason: `not a tar archive: ${error instanceof Error ? error.message : String(error)}` };
  }
  const config = entries['adapter_config.json'];
  const weights = entries['adapter_model.safetensors'];
  if (config === undefined || weights === undefined) return { files: null, reason: `no adapter_config.json and adapter_model.safetensors in it (${Object.keys(entries).join(', ') || 'empty'})` };
  try {
    const tinkerConfig = JSON.parse(new TextDecoder().decode(config)) as { peft_type?: unknown; r?: unknown; lora_alpha?: unknown; use_dora?: unknown };
    if (tinkerConfig.peft_type !== undefined && tinkerConfig.peft_type !== 'LORA') return { files: null, reason: `adapter_config.json has peft_type ${String(tinkerConfig.peft_type)}, not LORA` };
    if (tinkerConfig.use_dora === true) return { files: null, reason: 'adapter_config.json asks for DoRA, which PEFT loaders of vLLM and SGLang refuse' };
    const { r: rank, lora_alpha: alpha } = tinkerConfig;
    if (typeof rank !== 'number' || typeof alpha !== 'number') return { files: null, reason: 'adapter_config.json has no numeric r and lora_alpha' };
    const names = [...readSafetensors(weights).tensors.keys()];
    const foreign = names.filter((name) => !peftTensorName.test(name) || /unembed|\.w[123]\./.test(name));
    if (foreign.length > 0) return { files: null, reason: `tensor names PEFT loaders do not take: ${foreign.slice(0, 3).join(', ')}` };
    const targetModules = [...new Set(names.map((name) => (peftTensorName.exec(name)?.[1] ?? '').split('.').pop() ?? ''))].sort();
    if (targetModules.length === 0) return { files: null, reason: 'adapter_model.safetensors holds no LoRA tensors' };
    const peftConfig = {
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      base_model_name_or_path: baseModel,
      r: rank,
      lora_alpha: alpha,
      lora_dropout: 0,
      bias: 'none',
      fan_in_fan_out: false,
      target_modules: targetModules,
      modules_to_save: null,
      rank_pattern: {},
      alpha_pattern: {},
      inference_mode: true,
      init_lora_weights: true,
    };
    return { files: { 'adapter_config.json': new TextEncoder().encode(`${JSON.stringify(peftConfig, null, 2)}\n`), 'adapter_model.safetensors': weights } };
  } catch (error) {
    return { files: null, reason: error instanceof Error ? error.message : String(error) };
  }
}
