import type { Tensor } from '@tensorflow/tfjs';
import type { TensorFlow } from '../initialize-tensor-backend.js';

/*
 * Shared helpers for the tensor tests: deterministic data, running one computation on the cpu and
 * the wasm backends, and a tolerance check. Not used by production code.
 */

/** Deterministic values in [-1, 1) (an LCG), so failures reproduce. */
export function randomValues(count: number, seed: number, scale = 1): Float32Array {
  const values = new Float32Array(count);
  let state = (seed * 2654435761) >>> 0 || 1;
  for (let index = 0; index < count; index++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    values[index] = (state / 2 ** 32 - 0.5) * 2 * scale;
  }
  return values;
}

export function randomIntegers(count: number, seed: number, limit: number): Int32Array {
  const values = randomValues(count, seed);
  return Int32Array.from(values, (value) => Math.min(limit - 1, Math.floor(((value + 1) / 2) * limit)));
}

/** Runs `compute` on each backend and returns the values it produced there. */
export async function onBothBackends(
  tf: TensorFlow,
  compute: (backend: 'cpu' | 'wasm') => Tensor | Tensor[],
): Promise<{ cpu: Float32Array[]; wasm: Float32Array[] }> {
  const run = async (backend: 'cpu' | 'wasm'): Promise<Float32Array[]> => {
    await tf.setBackend(backend);
    const outputs = tf.tidy(() => compute(backend));
    const list = Array.isArray(outputs) ? outputs : [outputs];
    const values = list.map((tensor) => Float32Array.from(tensor.dataSync()));
    tf.dispose(list);
    return values;
  };
  const cpu = await run('cpu');
  const wasm = await run('wasm');
  return { cpu, wasm };
}

/** Largest |actual − expected| relative to the largest |expected| (at least 1). */
export function relativeError(actual: Float32Array, expected: Float32Array): number {
  if (actual.length !== expected.length) return Number.POSITIVE_INFINITY;
  let scale = 1;
  for (const value of expected) scale = Math.max(scale, Math.abs(value));
  let worst = 0;
  for (let index = 0; index < expected.length; index++) {
    const difference = Math.abs((actual[index] ?? Number.NaN) - (expected[index] ?? Number.NaN));
    worst = Math.max(worst, Number.isNaN(difference) ? Number.POSITIVE_INFINITY : difference / scale);
  }
  return worst;
}
