/**
 * Reader and writer for the safetensors format (`u64 LE header length | JSON header | data`),
 * single files and sharded folders (`model.safetensors.index.json`). Every floating-point dtype
 * is widened to float32 on read, because the engine computes in float32 only; files are written
 * in float32 or bfloat16 (half the size, what most published checkpoints and adapters use).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';

export type SafetensorsWriteDtype = 'F32' | 'BF16';

/** One tensor, always widened to float32, in row-major (C) order. */
export interface FloatTensorData {
  shape: number[];
  data: Float32Array;
}

export interface SafetensorsFile {
  tensors: Map<string, FloatTensorData>;
  /** The `__metadata__` string map; empty when absent. */
  metadata: Record<string, string>;
}

const bytesPerElementByDtype: Record<string, number> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
};

const maximumHeaderBytes = 100 * 1024 * 1024;

const tensorEntrySchema = z.object({
  dtype: z.string(),
  shape: z.array(z.number().int().nonnegative()),
  data_offsets: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
});

const indexSchema = z.object({
  metadata: z.record(z.string(), z.unknown()).optional(),
  weight_map: z.record(z.string(), z.string()),
});

function invalid(message: string): ClawrlError {
  return new ClawrlError('invalid_request', `safetensors: ${message}`);
}

function elementCount(shape: readonly number[]): number {
  return shape.reduce((product, size) => product * size, 1);
}

/** Reads one safetensors file; non-float tensors are rejected because nothing here needs them. */
export function readSafetensors(bytes: Uint8Array): SafetensorsFile {
  if (bytes.byteLength < 8) throw invalid('file shorter than its 8-byte header length');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength > maximumHeaderBytes || 8 + headerLength > bytes.byteLength) {
    throw invalid(`header length ${headerLength} does not fit the file`);
  }
  const headerText = new TextDecoder().decode(bytes.subarray(8, 8 + headerLength));
  if (!headerText.startsWith('{')) throw invalid('header is not a JSON object');
  let header: Record<string, unknown>;
  try {
    header = z.record(z.string(), z.unknown()).parse(JSON.parse(headerText));
  } catch (error) {
    throw new ClawrlError('invalid_request', 'safetensors: header is not valid JSON', { cause: error });
  }
  const dataStart = 8 + headerLength;
  const dataLength = bytes.byteLength - dataStart;
  const metadata = z.record(z.string(), z.string()).optional().parse(header['__metadata__']) ?? {};
  const entries = Object.entries(header)
    .filter(([name]) => name !== '__metadata__')
    .map(([name, value]) => {
      const parsed = tensorEntrySchema.safeParse(value);
      if (!parsed.success) throw invalid(`bad header entry for tensor '${name}'`);
      return { name, ...parsed.data };
    })
    .sort((left, right) => left.data_offsets[0] - right.data_offsets[0]);
  const tensors = new Map<string, FloatTensorData>();
  let expectedBegin = 0;
  for (const entry of entries) {
    const [begin, end] = entry.data_offsets;
    const size = bytesPerElementByDtype[entry.dtype];
    if (size === undefined) throw invalid(`tensor '${entry.name}' has unknown dtype ${entry.dtype}`);
    if (begin !== expectedBegin || end < begin || end > dataLength) {
      throw invalid(`tensor '${entry.name}' has offsets [${begin}, ${end}] that are not contiguous in the buffer`);
    }
    const count = elementCount(entry.shape);
    if (end - begin !== count * size) {
      throw invalid(`tensor '${entry.name}' byte length ${end - begin} does not match shape ${JSON.stringify(entry.shape)}`);
    }
    expectedBegin = end;
    const raw = bytes.subarray(dataStart + begin, dataStart + end);
    tensors.set(entry.name, { shape: entry.shape, data: decodeFloats(raw, entry.dtype, count, entry.name) });
  }
  if (expectedBegin !== dataLength) throw invalid('data buffer is longer than the tensors in the header');
  return { tensors, metadata };
}

function decodeFloats(raw: Uint8Array, dtype: string, count: number, name: string): Float32Array {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const out = new Float32Array(count);
  switch (dtype) {
    case 'F32':
      for (let index = 0; index < count; index += 1) out[index] = view.getFloat32(index * 4, true);
      return out;
    case 'F64':
      for (let index = 0; index < count; index += 1) out[index] = view.getFloat64(index * 8, true);
      return out;
    case 'BF16': {
      // bfloat16 is the top half of a float32, so widening is a 16-bit shift.
      const widened = new Uint32Array(out.buffer);
      for (let index = 0; index < count; index += 1) widened[index] = view.getUint16(index * 2, true) << 16;
      return out;
    }
    case 'F16':
      for (let index = 0; index < count; index += 1) out[index] = halfToFloat(view.getUint16(index * 2, true));
      return out;
    default:
      throw new ClawrlError('unsupported', `safetensors: tensor '${name}' has non-float dtype ${dtype}`);
  }
}

function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : Number.NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** Rounds float32 to bfloat16 to nearest-even, as PyTorch's `.to(torch.bfloat16)` does. */
function floatToBfloat16Bits(bits: number): number {
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x007fffff) !== 0) return ((bits >>> 16) | 0x40) & 0xffff;
  const roundingBias = 0x7fff + ((bits >>> 16) & 1);
  return ((bits + roundingBias) >>> 16) & 0xffff;
}

/**
 * Writes tensors in insertion order. The header is padded with spaces to a multiple of 8 so the
 * data stays aligned, and carries `format: pt`, which transformers checks for.
 */
export function writeSafetensors(
  tensors: ReadonlyMap<string, FloatTensorData>,
  options: { dtype?: SafetensorsWriteDtype; metadata?: Record<string, string> } = {},
): Uint8Array {
  const dtype = options.dtype ?? 'F32';
  const size = dtype === 'F32' ? 4 : 2;
  const header: Record<string, unknown> = { __metadata__: { format: 'pt', ...options.metadata } };
  let offset = 0;
  for (const [name, tensor] of tensors) {
    const count = elementCount(tensor.shape);
    if (count !== tensor.data.length) {
      throw new ClawrlError('internal_error', `safetensors: tensor '${name}' has ${tensor.data.length} values for shape ${JSON.stringify(tensor.shape)}`);
    }
    header[name] = { dtype, shape: tensor.shape, data_offsets: [offset, offset + count * size] };
    offset += count * size;
  }
  let headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const paddedLength = Math.ceil(headerBytes.byteLength / 8) * 8;
  if (paddedLength !== headerBytes.byteLength) {
    const padded = new Uint8Array(paddedLength).fill(0x20);
    padded.set(headerBytes);
    headerBytes = padded;
  }
  const out = new Uint8Array(8 + paddedLength + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(paddedLength), true);
  out.set(headerBytes, 8);
  let position = 8 + paddedLength;
  for (const tensor of tensors.values()) {
    if (dtype === 'F32') {
      for (const value of tensor.data) {
        view.setFloat32(position, value, true);
        position += 4;
      }
    } else {
      const bits = new Uint32Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.length);
      for (const word of bits) {
        view.setUint16(position, floatToBfloat16Bits(word), true);
        position += 2;
      }
    }
  }
  return out;
}

/**
 * Reads a sharded checkpoint from its index: each shard named in `weight_map` is read once, and
 * every tensor the index names must be present in the shard it points to.
 */
export async function readShardedSafetensors(
  indexJson: unknown,
  readShard: (fileName: string) => Promise<Uint8Array>,
): Promise<SafetensorsFile> {
  const parsed = indexSchema.safeParse(indexJson);
  if (!parsed.success) throw invalid('model.safetensors.index.json has no weight_map');
  const weightMap = parsed.data.weight_map;
  const tensors = new Map<string, FloatTensorData>();
  for (const fileName of new Set(Object.values(weightMap))) {
    const shard = readSafetensors(await readShard(fileName));
    for (const [name, tensor] of shard.tensors) tensors.set(name, tensor);
  }
  for (const [name, fileName] of Object.entries(weightMap)) {
    if (!tensors.has(name)) throw invalid(`tensor '${name}' listed in the index is missing from ${fileName}`);
  }
  return { tensors, metadata: {} };
}

/** Reads `model.safetensors`, or the shards listed in `model.safetensors.index.json`, from a folder. */
export async function readSafetensorsFolder(folder: string): Promise<SafetensorsFile> {
  let indexText: string | undefined;
  try {
    indexText = await readFile(join(folder, 'model.safetensors.index.json'), 'utf8');
  } catch {
    indexText = undefined;
  }
  if (indexText !== undefined) {
    let indexJson: unknown;
    try {
      indexJson = JSON.parse(indexText);
    } catch (error) {
      throw new ClawrlError('invalid_request', `safetensors: ${folder}/model.safetensors.index.json is not JSON`, { cause: error });
    }
    return readShardedSafetensors(indexJson, async (fileName) => readFile(join(folder, fileName)));
  }
  let bytes: Uint8Array;
  try {
    bytes = await readFile(join(folder, 'model.safetensors'));
  } catch (error) {
    throw new ClawrlError('not_found', `safetensors: no model.safetensors or index in ${folder}`, { cause: error });
  }
  return readSafetensors(bytes);
}
