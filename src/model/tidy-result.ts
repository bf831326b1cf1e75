/**
 * `tf.tidy` for results that are typed objects (interfaces, nulls) rather than tfjs's
 * `TensorContainer`: every tensor reachable from the result survives the scope, everything else
 * created inside is disposed.
 */
import * as tf from '@tensorflow/tfjs';

function collectTensors(value: unknown, into: tf.Tensor[]): void {
  if (value instanceof tf.Tensor) into.push(value);
  else if (Array.isArray(value)) for (const item of value) collectTensors(item, into);
  else if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) {
    for (const item of Object.values(value)) collectTensors(item, into);
  }
}

export function tidyResult<T>(compute: () => T): T {
  let result: { value: T } | undefined;
  tf.tidy(() => {
    const value = compute();
    result = { value };
    const tensors: tf.Tensor[] = [];
    collectTensors(value, tensors);
    return tensors;
  });
  if (result === undefined) throw new Error('tidyResult: compute did not run');
  return result.value;
}
