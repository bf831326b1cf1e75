import type { KernelConfig, KernelFunc, NamedAttrMap, TensorInfo } from '@tensorflow/tfjs';
import { ClawrlError } from '../spec/clawrl-error.js';
import { transposedOperandCache } from './transposed-operand-cache.js';
import {
  HeapScope,
  heapFloat32,
  int32Bytes,
  rawKernels,
  tensorData,
  wasmInternals,
  type WasmBackendInternals,
} from './wasm-backend-internals.js';

/*
 * BatchMatMul for tfjs-backend-wasm, lowered to the one fast path of the stock C++ kernel: XNNPACK's
 * fully-connected operator, which it takes only for a single 2-D product without transposes. Every
 * other case (transposes, batches, broadcast) otherwise falls into a naive loop 10–17× slower.
 *
 * Two plans compute C = op(A)·op(B):
 * - direct: make both operands non-transposed (one batched Transpose call each, if needed), then one
 *   XNNPACK call per output batch, or a single call with the batch folded into rows when B is shared;
 * - swapped: compute Cᵀ = op(B)ᵀ·op(A)ᵀ the same way, then transpose it into the output. When B is
 *   stored as [N,K] (transposeB) this avoids transposing B at all, which matters for a large B such
 *   as the tied lm-head [V,d].
 * A small cost model (element moves for transposes and XNNPACK weight packing, plus arithmetic)
 * picks the cheaper plan. Operand slices are zero-copy heap views with their own C++ ids.
 */

/*
 * Relative costs, in units of one element moved. Calibrated by hand on a 2-vCPU Xeon: a transpose or
 * an XNNPACK weight pack moves ~0.3–1 element/ns, the gemm runs ~25–29 GFLOPS, so one element move
 * is worth ~16 multiply-adds. Only the ratios matter; they decide plans that differ by 2× or more.
 */
const transposeCostPerElement = 1.0;
const packCostPerElement = 1.0;
/** Multiply-adds per unit of element-move cost; XNNPACK pads N to its 8-wide register tile. */
const multiplyAddsPerCostUnit = 16;
const xnnpackTileWidth = 8;
const costPerCall = 2000;

interface Operand {
  id: number;
  offset: number;
  /** Number of stored matrices (product of the batch dimensions). */
  batch: number;
  rows: number;
  columns: number;
  /** True when this is a caller's tensor, whose packed XNNPACK copy may already be cached. */
  original: boolean;
}

interface Problem {
  a: Operand;
  b: Operand;
  transposeA: boolean;
  transposeB: boolean;
  m: number;
  n: number;
  k: number;
  outputBatch: number;
  /** For each output batch index, the matrix index in A and in B (broadcasting). */
  batchIndexA: Int32Array;
  batchIndexB: Int32Array;
}

function product(values: readonly number[]): number {
  return values.reduce((accumulator, value) => accumulator * value, 1);
}

function broadcastBatchShape(shapeA: number[], shapeB: number[]): number[] {
  const rank = Math.max(shapeA.length, shapeB.length);
  const result: number[] = [];
  for (let index = 0; index < rank; index++) {
    const sizeA = shapeA[shapeA.length - rank + index] ?? 1;
    const sizeB = shapeB[shapeB.length - rank + index] ?? 1;
    if (sizeA !== sizeB && sizeA !== 1 && sizeB !== 1) {
      throw new ClawrlError(
        'invalid_request',
        `matMul batch dimensions [${shapeA.join(',')}] and [${shapeB.join(',')}] do not broadcast`,
      );
    }
    result.push(sizeA === 1 ? sizeB : sizeA);
  }
  return result;
}

/** Maps every output batch index to the index of the (possibly broadcast) operand matrix. */
function batchIndexMap(outputShape: number[], operandShape: number[]): Int32Array {
  const outputBatch = product(outputShape);
  const map = new Int32Array(outputBatch);
  const padded = [...new Array<number>(outputShape.length - operandShape.length).fill(1), ...operandShape];
  if (product(padded) === outputBatch) {
    for (let index = 0; index < outputBatch; index++) map[index] = index;
    return map;
  }
  for (let index = 0; index < outputBatch; index++) {
    let remainder = index;
    let operandIndex = 0;
    let operandStride = 1;
    for (let dimension = outputShape.length - 1; dimension >= 0; dimension--) {
      const outputSize = outputShape[dimension] ?? 1;
      const operandSize = padded[dimension] ?? 1;
      const coordinate = remainder % outputSize;
      remainder = Math.floor(remainder / outputSize);
      if (operandSize !== 1) operandIndex += coordinate * operandStride;
      operandStride *= operandSize;
    }
    map[index] = operandIndex;
  }
  return map;
}

function flopCost(rows: number, shared: number, columns: number): number {
  return (rows * shared * Math.ceil(columns / xnnpackTileWidth) * xnnpackTileWidth) / multiplyAddsPerCostUnit;
}

/**
 * XNNPACK packs (copies) each right-hand side it sees, once per id. A caller's tensor may already be
 * packed from an earlier call (a weight), so it is counted at half price; a fresh buffer or slice
 * view is packed on every call.
 */
function packCost(elements: number, maybeCached: boolean, calls: number, sharedByAllCalls: boolean): number {
  const single = elements * packCostPerElement * (maybeCached ? 0.5 : 1);
  return sharedByAllCalls ? single : single * calls;
}

function directCost(problem: Problem): number {
  const { a, b, m, n, k, outputBatch } = problem;
  let cost = 0;
  if (problem.transposeA) cost += a.batch * m * k * transposeCostPerElement;
  if (problem.transposeB) cost += b.batch * k * n * transposeCostPerElement;
  const folded = b.batch === 1;
  const calls = folded ? 1 : outputBatch;
  cost += packCost(k * n, b.original && !problem.transposeB, calls, folded);
  return cost + outputBatch * flopCost(m, k, n) + calls * costPerCall;
}

function swappedCost(problem: Problem): number {
  const { a, b, m, n, k, outputBatch } = problem;
  let cost = outputBatch * n * m * transposeCostPerElement;
  if (!problem.transposeB) cost += b.batch * k * n * transposeCostPerElement;
  if (!problem.transposeA) cost += a.batch * m * k * transposeCostPerElement;
  const folded = a.batch === 1;
  const calls = folded ? 1 : outputBatch;
  cost += packCost(k * m, a.original && problem.transposeA, calls, folded);
  return cost + outputBatch * flopCost(n, k, m) + calls * costPerCall;
}

/** Returns [batch, columns, rows] copies of [batch, rows, columns] matrices (one C++ call). */
function transposeMatrices(backend: WasmBackendInternals, scope: HeapScope, operand: Operand): Operand {
  const elementCount = operand.batch * operand.rows * operand.columns;
  const target = scope.buffer(elementCount);
  transposeInto(backend, operand, operand.batch, operand.rows, operand.columns, target);
  return {
    id: target.id,
    offset: target.offset,
    batch: operand.batch,
    rows: operand.columns,
    columns: operand.rows,
    original: false,
  };
}

interface HeapMatrix {
  id: number;
  offset: number;
}

/**
 * [batch, rows, columns] → [batch, columns, rows]. The C++ Transpose kernel is fast for wide
 * matrices but slows to ~10 ns/element for tall ones (a [49152,256] lm-head output took 120 ms);
 * a cache-blocked JS loop over the heap does those in a third of the time.
 */
function transposeInto(
  backend: WasmBackendInternals,
  source: HeapMatrix,
  batch: number,
  rows: number,
  columns: number,
  target: HeapMatrix,
): void {
  if (rows === 1 || columns === 1) {
    const bytes = batch * rows * columns * 4;
    backend.wasm.HEAPU8.copyWithin(target.offset, source.offset, source.offset + bytes);
    return;
  }
  if (rows > tallMatrixRatio * columns) {
    const count = batch * rows * columns;
    const from = heapFloat32(backend, source.offset, count);
    const to = heapFloat32(backend, target.offset, count);
    for (let matrix = 0; matrix < batch; matrix++) blockedTranspose(from, to, matrix * rows * columns, rows, columns);
    return;
  }
  // Size-1 dimensions are dropped first: the C++ transpose is fastest at the lowest rank.
  const shape = batch === 1 ? [rows, columns] : [batch, rows, columns];
  const permutation = batch === 1 ? [1, 0] : [0, 2, 1];
  rawKernels(backend).transpose(
    source.id,
    int32Bytes(shape),
    shape.length,
    0, // CppDType.float32
    target.id,
    int32Bytes(permutation),
    permutation.length,
  );
}

const tallMatrixRatio = 4;
const transposeBlock = 16;

function blockedTranspose(from: Float32Array, to: Float32Array, base: number, rows: number, columns: number): void {
  for (let rowStart = 0; rowStart < rows; rowStart += transposeBlock) {
    const rowEnd = Math.min(rowStart + transposeBlock, rows);
    for (let columnStart = 0; columnStart < columns; columnStart += transposeBlock) {
      const columnEnd = Math.min(columnStart + transposeBlock, columns);
      for (let row = rowStart; row < rowEnd; row++) {
        let sourceIndex = base + row * columns + columnStart;
        for (let column = columnStart; column < columnEnd; column++) {
          to[base + column * rows + row] = from[sourceIndex++] as number;
        }
      }
    }
  }
}

/** One XNNPACK fully-connected product: out[rows, n] = left[rows, k] · right[k, n]. */
function xnnpackMatMul(
  backend: WasmBackendInternals,
  leftId: number,
  rows: number,
  k: number,
  rightId: number,
  n: number,
  outId: number,
): void {
  rawKernels(backend).batchMatMul(
    leftId,
    int32Bytes([1, rows, k]),
    3,
    rightId,
    int32Bytes([1, k, n]),
    3,
    false,
    false,
    outId,
  );
}

/**
 * Runs `left[i]·right[j]` for every output batch into the matrices of `target`, folding into a
 * single call when `right` is shared by all batches.
 */
function runProducts(
  backend: WasmBackendInternals,
  scope: HeapScope,
  left: Operand,
  right: Operand,
  leftIndex: Int32Array,
  rightIndex: Int32Array,
  target: { id: number; offset: number },
  outputBatch: number,
): void {
  const rows = left.rows;
  const k = left.columns;
  const n = right.columns;
  if (right.batch === 1) {
    // leftIndex is the identity here: with a shared right side the output batch is left's batch.
    xnnpackMatMul(backend, left.id, rows * left.batch, k, right.id, n, target.id);
    return;
  }
  const leftBytes = rows * k * 4;
  const rightBytes = k * n * 4;
  const outBytes = rows * n * 4;
  for (let index = 0; index < outputBatch; index++) {
    const leftId = left.batch === 1 ? left.id : scope.view(left.offset + (leftIndex[index] ?? 0) * leftBytes, rows * k);
    const rightId = scope.view(right.offset + (rightIndex[index] ?? 0) * rightBytes, k * n);
    const outId = scope.view(target.offset + index * outBytes, rows * n);
    xnnpackMatMul(backend, leftId, rows, k, rightId, n, outId);
    scope.releaseView(outId);
    scope.releaseView(rightId);
    if (leftId !== left.id) scope.releaseView(leftId);
  }
}

function runDirect(backend: WasmBackendInternals, scope: HeapScope, problem: Problem, out: { id: number; offset: number }): void {
  const left = problem.transposeA ? transposeMatrices(backend, scope, problem.a) : problem.a;
  const right = problem.transposeB ? transposeMatrices(backend, scope, problem.b) : problem.b;
  runProducts(backend, scope, left, right, problem.batchIndexA, problem.batchIndexB, out, problem.outputBatch);
}

function runSwapped(backend: WasmBackendInternals, scope: HeapScope, problem: Problem, out: { id: number; offset: number }): void {
  const left = problem.transposeB ? problem.b : transposeMatrices(backend, scope, problem.b);
  const right = problem.transposeA ? problem.a : transposeMatrices(backend, scope, problem.a);
  const transposedOut = scope.buffer(problem.outputBatch * problem.n * problem.m);
  runProducts(backend, scope, left, right, problem.batchIndexB, problem.batchIndexA, transposedOut, problem.outputBatch);
  transposeInto(backend, transposedOut, problem.outputBatch, problem.n, problem.m, out);
}

export type MatMulPlanName = 'direct' | 'swapped';

/** Exposed for tests and benchmarks: which plan the cost model picks for a product. */
export function chooseMatMulPlan(problem: Omit<Problem, 'batchIndexA' | 'batchIndexB'>): MatMulPlanName {
  const full: Problem = { ...problem, batchIndexA: new Int32Array(0), batchIndexB: new Int32Array(0) };
  // The untransposed shared-weight case is XNNPACK's native path; swapping would forfeit its
  // packed-weight cache (the decode hot path), so it is never swapped.
  if (!problem.transposeA && !problem.transposeB && problem.b.batch === 1) return 'direct';
  return swappedCost(full) < directCost(full) ? 'swapped' : 'direct';
}

let forcedPlan: MatMulPlanName | undefined;

/** Test hook: forces one plan so that both are checked against the cpu backend. */
export function forceMatMulPlan(plan: MatMulPlanName | undefined): void {
  forcedPlan = plan;
}

function batchMatMul(args: { inputs: { a?: TensorInfo; b?: TensorInfo }; backend: unknown; attrs?: NamedAttrMap }): TensorInfo {
  const { a, b } = args.inputs;
  if (a === undefined || b === undefined) throw new ClawrlError('internal_error', 'BatchMatMul needs inputs a and b');
  const transposeA = args.attrs?.['transposeA'] === true;
  const transposeB = args.attrs?.['transposeB'] === true;
  if (a.dtype !== 'float32' || b.dtype !== 'float32') {
    throw new ClawrlError('unsupported', `BatchMatMul on wasm supports float32 only, got ${a.dtype} and ${b.dtype}`);
  }
  const backend = wasmInternals(args.backend);
  const rankA = a.shape.length;
  const rankB = b.shape.length;
  const m = (transposeA ? a.shape[rankA - 1] : a.shape[rankA - 2]) ?? 1;
  const k = (transposeA ? a.shape[rankA - 2] : a.shape[rankA - 1]) ?? 1;
  const kOfB = (transposeB ? b.shape[rankB - 1] : b.shape[rankB - 2]) ?? 1;
  const n = (transposeB ? b.shape[rankB - 2] : b.shape[rankB - 1]) ?? 1;
  if (k !== kOfB) {
    throw new ClawrlError(
      'invalid_request',
      `matMul inner dimensions differ: [${a.shape.join(',')}]${transposeA ? 'ᵀ' : ''} · [${b.shape.join(',')}]${transposeB ? 'ᵀ' : ''}`,
    );
  }
  const batchShapeA = a.shape.slice(0, -2);
  const batchShapeB = b.shape.slice(0, -2);
  const outputBatchShape = broadcastBatchShape(batchShapeA, batchShapeB);
  const out = backend.makeOutput([...outputBatchShape, m, n], 'float32');
  const outputBatch = product(outputBatchShape);
  const outData = tensorData(backend, out);
  if (outputBatch * m * n === 0) return out;
  if (k === 0) {
    heapFloat32(backend, outData.memoryOffset, outputBatch * m * n).fill(0);
    return out;
  }
  const dataA = tensorData(backend, a);
  const dataB = tensorData(backend, b);
  const problem: Problem = {
    a: {
      id: dataA.id,
      offset: dataA.memoryOffset,
      batch: product(batchShapeA),
      rows: transposeA ? k : m,
      columns: transposeA ? m : k,
      original: true,
    },
    b: {
      id: dataB.id,
      offset: dataB.memoryOffset,
      batch: product(batchShapeB),
      rows: transposeB ? n : k,
      columns: transposeB ? k : n,
      original: true,
    },
    transposeA,
    transposeB,
    m,
    n,
    k,
    outputBatch,
    batchIndexA: batchIndexMap(outputBatchShape, batchShapeA),
    batchIndexB: batchIndexMap(outputBatchShape, batchShapeB),
  };
  if (transposeB && problem.b.batch === 1 && forcedPlan === undefined) {
    // A recurring Wᵀ (backward through a frozen linear): its kept copy makes this a forward product.
    const source = { id: dataB.id, offset: dataB.memoryOffset };
    const copy = transposedOperandCache(backend).lookup(dataB.id, n * k, (target) => transposeInto(backend, source, 1, n, k, target));
    if (copy !== undefined) Object.assign(problem, { b: { ...copy, batch: 1, rows: k, columns: n, original: true }, transposeB: false });
  }
  const plan = forcedPlan ?? chooseMatMulPlan(problem);
  const scope = new HeapScope(backend);
  try {
    const target = { id: outData.id, offset: outData.memoryOffset };
    if (plan === 'direct') runDirect(backend, scope, problem, target);
    else runSwapped(backend, scope, problem, target);
  } finally {
    scope.release();
  }
  return out;
}

export const wasmBatchMatMulConfig: KernelConfig = {
  kernelName: 'BatchMatMul',
  backendName: 'wasm',
  kernelFunc: batchMatMul as unknown as KernelFunc,
};
