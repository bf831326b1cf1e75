import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { initializeTensorBackend, type TensorFlow } from './initialize-tensor-backend.js';
import { chooseMatMulPlan, forceMatMulPlan, type MatMulPlanName } from './wasm-batch-mat-mul.js';
import { onBothBackends, randomValues, relativeError } from './testing/on-both-backends.js';

let tf: TensorFlow;

beforeAll(async () => {
  tf = await initializeTensorBackend({ backend: 'wasm' });
});

afterEach(() => {
  forceMatMulPlan(undefined);
});

interface BatchCase {
  name: string;
  batchA: number[];
  batchB: number[];
}

const batchCases: BatchCase[] = [
  { name: '2-D', batchA: [], batchB: [] },
  { name: 'batched', batchA: [3], batchB: [3] },
  { name: 'A batched, B shared', batchA: [3], batchB: [] },
  { name: 'A shared, B batched', batchA: [], batchB: [3] },
  { name: 'size-1 batch broadcast', batchA: [2, 1], batchB: [1, 3] },
  { name: 'rank 4', batchA: [2, 3], batchB: [2, 3] },
  { name: 'explicit batch of 1', batchA: [1], batchB: [1] },
];

const shapes: Array<[number, number, number]> = [
  [5, 7, 3],
  [1, 16, 33],
  [17, 9, 1],
  // Tall operands ([40,3]) take the blocked JS transpose instead of the C++ one.
  [3, 40, 2],
  [41, 3, 18],
];

const transposes: Array<[boolean, boolean]> = [
  [false, false],
  [false, true],
  [true, false],
  [true, true],
];

function operandShape(batch: number[], rows: number, columns: number, transposed: boolean): number[] {
  return [...batch, ...(transposed ? [columns, rows] : [rows, columns])];
}

function broadcastShape(left: number[], right: number[]): number[] {
  const rank = Math.max(left.length, right.length);
  return Array.from({ length: rank }, (_, index) =>
    Math.max(left[left.length - rank + index] ?? 1, right[right.length - rank + index] ?? 1),
  );
}

const plans: Array<MatMulPlanName | undefined> = [undefined, 'direct', 'swapped'];

describe('patched wasm BatchMatMul matches the cpu backend', () => {
  for (const plan of plans) {
    test(`all transposes, batch modes and shapes (plan: ${plan ?? 'cost model'})`, async () => {
      forceMatMulPlan(plan);
      let seed = 1;
      for (const { name, batchA, batchB } of batchCases) {
        for (const [m, k, n] of shapes) {
          for (const [transposeA, transposeB] of transposes) {
            const shapeA = operandShape(batchA, m, k, transposeA);
            const shapeB = operandShape(batchB, k, n, transposeB);
            const valuesA = randomValues(shapeA.reduce((p, s) => p * s, 1), seed++);
            const valuesB = randomValues(shapeB.reduce((p, s) => p * s, 1), seed++);
            const { cpu, wasm } = await onBothBackends(tf, (backend) => {
              let a = tf.tensor(valuesA, shapeA);
              let b = tf.tensor(valuesB, shapeB);
              if (backend === 'cpu') {
                // The cpu BatchMatMul mishandles batch dims broadcast from both sides
                // ([2,1]×[1,3] yields 3 matrices, not 6), so the reference broadcasts explicitly.
                const batch = broadcastShape(batchA, batchB);
                a = tf.broadcastTo(a, [...batch, ...shapeA.slice(-2)]);
                b = tf.broadcastTo(b, [...batch, ...shapeB.slice(-2)]);
              }
              return tf.matMul(a, b, transposeA, transposeB);
            });
            const label = `${name} m=${m} k=${k} n=${n} tA=${transposeA} tB=${transposeB}`;
            expect(relativeError(wasm[0] as Float32Array, cpu[0] as Float32Array), label).toBeLessThan(1e-5);
          }
        }
      }
    });
  }

  test('output shape follows the broadcast batch dimensions', async () => {
    await tf.setBackend('wasm');
    const product = tf.tidy(() => tf.matMul(tf.ones([2, 1, 4, 5]), tf.ones([1, 3, 6, 5]), false, true));
    expect(product.shape).toEqual([2, 3, 4, 6]);
    expect(Array.from(product.dataSync()).every((value) => value === 5)).toBe(true);
    product.dispose();
  });

  test('an empty shared dimension gives zeros', async () => {
    await tf.setBackend('wasm');
    const product = tf.tidy(() => tf.matMul(tf.ones([3, 0]), tf.ones([0, 2])));
    expect(Array.from(product.dataSync())).toEqual([0, 0, 0, 0, 0, 0]);
    product.dispose();
  });

  for (const plan of plans) {
    test(`gradients match for every transpose and broadcast case (plan: ${plan ?? 'cost model'})`, async () => {
      forceMatMulPlan(plan);
      let seed = 1000;
      // tfjs-core's matMul gradient does not reduce broadcast batch dimensions (on any backend), so
      // gradients are compared for unbroadcast shapes only.
      const gradientCases = [batchCases[0], batchCases[1], batchCases[6]] as BatchCase[];
      for (const { name, batchA, batchB } of gradientCases) {
        for (const [transposeA, transposeB] of transposes) {
          const [m, k, n] = [6, 5, 4];
          const shapeA = operandShape(batchA, m, k, transposeA);
          const shapeB = operandShape(batchB, k, n, transposeB);
          const valuesA = randomValues(shapeA.reduce((p, s) => p * s, 1), seed++);
          const valuesB = randomValues(shapeB.reduce((p, s) => p * s, 1), seed++);
          const { cpu, wasm } = await onBothBackends(tf, () => {
            const a = tf.tensor(valuesA, shapeA);
            const b = tf.tensor(valuesB, shapeB);
            const product = tf.matMul(a, b, transposeA, transposeB);
            const weights = tf.tensor(randomValues(product.size, seed), product.shape);
            return tf.grads((x, y) => tf.sum(tf.mul(tf.matMul(x, y, transposeA, transposeB), weights)))([a, b]);
          });
          const label = `${name} tA=${transposeA} tB=${transposeB}`;
          expect(relativeError(wasm[0] as Float32Array, cpu[0] as Float32Array), `dA ${label}`).toBeLessThan(1e-5);
          expect(relativeError(wasm[1] as Float32Array, cpu[1] as Float32Array), `dB ${label}`).toBeLessThan(1e-5);
        }
      }
    });
  }
});

describe('matmul plan choice', () => {
  const operand = (batch: number, rows: number, columns: number) => ({
    id: 0,
    offset: 0,
    batch,
    rows,
    columns,
    original: true,
  });

  test('keeps the native XNNPACK path for an untransposed shared weight', () => {
    expect(
      chooseMatMulPlan({
        a: operand(1, 1, 576),
        b: operand(1, 576, 1536),
        transposeA: false,
        transposeB: false,
        m: 1,
        n: 1536,
        k: 576,
        outputBatch: 1,
      }),
    ).toBe('direct');
  });

  test('does not transpose a large tied lm-head [V,d]', () => {
    expect(
      chooseMatMulPlan({
        a: operand(1, 256, 576),
        b: operand(1, 49152, 576),
        transposeA: false,
        transposeB: true,
        m: 256,
        n: 49152,
        k: 576,
        outputBatch: 1,
      }),
    ).toBe('swapped');
  });
});

describe('memory', () => {
  test('repeated patched matmuls leak neither tensors nor heap scratch', async () => {
    const { wasmMemoryUsage } = await import('./wasm-memory.js');
    await tf.setBackend('wasm');
    const a = tf.tensor(randomValues(2 * 24 * 16, 7), [2, 24, 16]);
    const b = tf.tensor(randomValues(2 * 20 * 16, 8), [2, 20, 16]);
    const run = () => {
      for (const plan of ['direct', 'swapped'] as const) {
        forceMatMulPlan(plan);
        for (const [transposeA, transposeB] of [
          [false, true],
          [true, true],
        ] as Array<[boolean, boolean]>) {
          const left = transposeA ? tf.transpose(a, [0, 2, 1]) : a;
          const product = tf.matMul(left, b, transposeA, transposeB);
          product.dispose();
          if (left !== a) left.dispose();
        }
      }
    };
    run();
    const tensorsBefore = tf.memory().numTensors;
    const bytesBefore = tf.memory().numBytes;
    const heapBefore = wasmMemoryUsage()?.allocatedBytes;
    for (let index = 0; index < 20; index++) run();
    expect(tf.memory().numTensors).toBe(tensorsBefore);
    expect(tf.memory().numBytes).toBe(bytesBefore);
    expect(wasmMemoryUsage()?.allocatedBytes).toBe(heapBefore);
    a.dispose();
    b.dispose();
  });
});
