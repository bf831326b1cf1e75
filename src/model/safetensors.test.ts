import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import { readSafetensors, readShardedSafetensors, writeSafetensors } from './safetensors.js';
import type { FloatTensorData } from './safetensors.js';

function sample(): Map<string, FloatTensorData> {
  return new Map([
    ['a.weight', { shape: [2, 3], data: Float32Array.from([1, -2.5, 3.25, 0, 1e-3, -65504]) }],
    ['b.bias', { shape: [3], data: Float32Array.from([0.1, 0.2, 0.3]) }],
    ['scalar', { shape: [], data: Float32Array.from([7]) }],
  ]);
}

/** A hand-built file with one tensor of `dtype` and the given little-endian bytes. */
function singleTensorFile(dtype: string, shape: number[], bytes: number[]): Uint8Array {
  const header = new TextEncoder().encode(JSON.stringify({ t: { dtype, shape, data_offsets: [0, bytes.length] } }));
  const out = new Uint8Array(8 + header.length + bytes.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(header.length), true);
  out.set(header, 8);
  out.set(bytes, 8 + header.length);
  return out;
}

describe('safetensors', () => {
  it('round-trips float32 exactly, with an 8-byte aligned header and format metadata', () => {
    const bytes = writeSafetensors(sample());
    const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(headerLength % 8).toBe(0);
    const file = readSafetensors(bytes);
    expect(file.metadata).toEqual({ format: 'pt' });
    for (const [name, tensor] of sample()) {
      expect(file.tensors.get(name)?.shape).toEqual(tensor.shape);
      expect(Array.from(file.tensors.get(name)?.data ?? [])).toEqual(Array.from(tensor.data));
    }
  });

  it('round-trips bfloat16 with round-to-nearest-even', () => {
    const values = Float32Array.from([1, 1.00390625, 1.01171875, -3.14159, 1e30, 0]);
    const file = readSafetensors(writeSafetensors(new Map([['x', { shape: [6], data: values }]]), { dtype: 'BF16' }));
    // Expected values from PyTorch .to(torch.bfloat16). 1 + 2^-8 is a tie and rounds to the even 1; 1 + 3·2^-8 rounds up to 1 + 2^-6.
    expect(Array.from(file.tensors.get('x')?.data ?? [])).toEqual([1, 1, 1.015625, -3.140625, 1.0002555517425873e30, 0]);
  });

  it('widens float16 and float64', () => {
    // float16: 1.0 = 0x3c00, -2.0 = 0xc000, 65504 = 0x7bff, smallest subnormal 0x0001.
    const half = readSafetensors(singleTensorFile('F16', [4], [0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00]));
    expect(Array.from(half.tensors.get('t')?.data ?? [])).toEqual([1, -2, 65504, 2 ** -24]);
    const double = new Uint8Array(new Float64Array([0.5, -8]).buffer);
    expect(Array.from(readSafetensors(singleTensorFile('F64', [2], Array.from(double))).tensors.get('t')?.data ?? [])).toEqual([0.5, -8]);
  });

  it('rejects truncated buffers, wrong byte lengths and integer tensors', () => {
    const bytes = writeSafetensors(sample());
    expect(() => readSafetensors(bytes.subarray(0, bytes.length - 4))).toThrow(ClawrlError);
    expect(() => readSafetensors(singleTensorFile('F32', [3], [0, 0, 0, 0]))).toThrow(/byte length/);
    expect(() => readSafetensors(singleTensorFile('I32', [1], [1, 0, 0, 0]))).toThrow(/non-float dtype/);
    expect(() => readSafetensors(Uint8Array.from([1, 2, 3]))).toThrow(ClawrlError);
  });

  it('reads shards through an index and checks every listed tensor is present', async () => {
    const tensors = [...sample()];
    const shards: Record<string, Uint8Array> = {
      'model-00001-of-00002.safetensors': writeSafetensors(new Map(tensors.slice(0, 1))),
      'model-00002-of-00002.safetensors': writeSafetensors(new Map(tensors.slice(1))),
    };
    const weightMap = {
      'a.weight': 'model-00001-of-00002.safetensors',
      'b.bias': 'model-00002-of-00002.safetensors',
      scalar: 'model-00002-of-00002.safetensors',
    };
    const readShard = async (name: string): Promise<Uint8Array> => shards[name] ?? new Uint8Array();
    const file = await readShardedSafetensors({ metadata: { total_size: 40 }, weight_map: weightMap }, readShard);
    expect([...file.tensors.keys()].sort()).toEqual(['a.weight', 'b.bias', 'scalar']);
    await expect(
      readShardedSafetensors({ weight_map: { ...weightMap, missing: 'model-00001-of-00002.safetensors' } }, readShard),
    ).rejects.toThrow(/missing/);
  });
});
