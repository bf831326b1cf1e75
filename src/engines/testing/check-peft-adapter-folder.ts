/**
 * What the fake vLLM and SGLang servers check in a folder they are told to load, as the real
 * loaders do (engines.md §1.6, §6.4; vLLM `vllm/lora/peft_helper.py`, SGLang's LoRA loader):
 * a PEFT adapter needs `adapter_config.json` with `peft_type` LORA, `r`, `lora_alpha`,
 * `target_modules`, no `modules_to_save`, no DoRA, the served base model named in
 * `base_model_name_or_path`; and `adapter_model.safetensors` whose tensors are
 * `base_model.model.<module>.lora_A.weight` `[r, in]` / `.lora_B.weight` `[out, r]` in pairs, for
 * target modules only. A full-weight folder needs `config.json` and safetensors weights with a
 * valid header. The safetensors header is read here on its own (8-byte little-endian length,
 * then JSON), not with clawrl's reader, so the check does not share the writer's mistakes.
 * Each check returns the reason a folder is rejected, or null.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

const dtypeBytes: Record<string, number> = { F32: 4, F16: 2, BF16: 2, F64: 8, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

/** The tensors of a safetensors file by name, or the reason the file is malformed. */
export function readSafetensorsHeader(bytes: Uint8Array): Map<string, HeaderEntry> | string {
  if (bytes.length < 8) return 'the safetensors file is shorter than its 8-byte header length';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = Number(view.getBigUint64(0, true));
  if (length <= 0 || 8 + length > bytes.length) return `the safetensors header length ${length} does not fit the file (${bytes.length} bytes)`;
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  } catch {
    return 'the safetensors header is not JSON';
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) return 'the safetensors header is not a JSON object';
  const dataLength = bytes.length - 8 - length;
  const tensors = new Map<string, HeaderEntry>();
  for (const [name, value] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') continue;
    const entry = value as Partial<HeaderEntry> | null;
    const shape = entry?.shape;
    const offsets = entry?.data_offsets;
    const width = dtypeBytes[entry?.dtype ?? ''];
    if (width === undefined || !Array.isArray(shape) || !Array.isArray(offsets) || offsets.length !== 2) return `tensor ${name} has a malformed header entry`;
    const [begin, end] = offsets;
    const elements = shape.reduce((product, size) => product * size, 1);
    if (begin < 0 || end > dataLength || end - begin !== elements * width) return `tensor ${name} has data offsets that do not match its shape`;
    tensors.set(name, { dtype: entry?.dtype ?? '', shape, data_offsets: [begin, end] });
  }
  return tensors;
}

async function readJson(path: string): Promise<Record<string, unknown> | string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return `${path} cannot be read`;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : `${path} is not a JSON object`;
  } catch {
    return `${path} is not JSON`;
  }
}

const loraTensor = /^base_model\.model\.(.+)\.lora_([AB])\.weight$/;

/** Null when `folder` holds a PEFT LoRA adapter for `baseModel`, else why not. */
export async function checkPeftAdapterFolder(folder: string, baseModel: string): Promise<string | null> {
  const config = await readJson(join(folder, 'adapter_config.json'));
  if (typeof config === 'string') return `No adapter found for ${folder}: ${config}`;
  if (config['peft_type'] !== 'LORA') return `adapter_config.json: peft_type must be LORA, got ${JSON.stringify(config['peft_type'])}`;
  const rank = config['r'];
  if (typeof rank !== 'number' || !Number.isInteger(rank) || rank <= 0) return 'adapter_config.json: r must be a positive integer';
  if (typeof config['lora_alpha'] !== 'number') return 'adapter_config.json: lora_alpha is required';
  const rawTargets = config['target_modules'];
  const targets = typeof rawTargets === 'string' ? [rawTargets] : rawTargets;
  if (!Array.isArray(targets) || targets.length === 0 || !targets.every((target) => typeof target === 'string')) return 'adapter_config.json: target_modules is required';
  const modulesToSave = config['modules_to_save'];
  if (modulesToSave !== undefined && modulesToSave !== null && !(Array.isArray(modulesToSave) && modulesToSave.length === 0)) return 'adapter_config.json: modules_to_save is not supported';
  if (config['use_dora'] === true) return 'adapter_config.json: DoRA is not supported';
  if (config['base_model_name_or_path'] !== baseModel) {
    return `adapter_config.json: base_model_name_or_path ${JSON.stringify(config['base_model_name_or_path'])} is not the served model ${JSON.stringify(baseModel)}`;
  }
  let weights: Uint8Array;
  try {
    weights = await readFile(join(folder, 'adapter_model.safetensors'));
  } catch {
    return `No adapter found for ${folder}: adapter_model.safetensors is missing`;
  }
  const tensors = readSafetensorsHeader(weights);
  if (typeof tensors === 'string') return `adapter_model.safetensors: ${tensors}`;
  const pairs = new Map<string, { a?: number[]; b?: number[] }>();
  for (const [name, entry] of tensors) {
    const match = loraTensor.exec(name);
    if (match === null) return `adapter_model.safetensors: unexpected tensor ${name}`;
    const modulePath = match[1] ?? '';
    const moduleName = modulePath.split('.').at(-1) ?? '';
    if (!targets.includes(moduleName)) return `adapter_model.safetensors: ${name} is not in target_modules`;
    const pair = pairs.get(modulePath) ?? {};
    if (match[2] === 'A') pair.a = entry.shape;
    else pair.b = entry.shape;
    pairs.set(modulePath, pair);
  }
  if (pairs.size === 0) return 'adapter_model.safetensors: no LoRA tensors';
  for (const [modulePath, { a, b }] of pairs) {
    if (a === undefined || b === undefined) return `adapter_model.safetensors: ${modulePath} needs both lora_A and lora_B`;
    if (a.length !== 2 || b.length !== 2 || a[0] !== rank || b[1] !== rank) {
      return `adapter_model.safetensors: ${modulePath} has shapes ${JSON.stringify(a)} / ${JSON.stringify(b)}, not [${rank}, in] / [out, ${rank}]`;
    }
  }
  return null;
}

/** Null when `folder` is a loadable model folder (config.json and safetensors weights), else why not. */
export async function checkModelFolder(folder: string): Promise<string | null> {
  const config = await readJson(join(folder, 'config.json'));
  if (typeof config === 'string') return config;
  let names: string[];
  try {
    names = (await readdir(folder)).filter((name) => name.endsWith('.safetensors'));
  } catch {
    return `${folder} cannot be read`;
  }
  if (names.length === 0) return `no *.safetensors weights in ${folder}`;
  for (const name of names) {
    const tensors = readSafetensorsHeader(await readFile(join(folder, name)));
    if (typeof tensors === 'string') return `${name}: ${tensors}`;
  }
  return null;
}
