import * as tf from '@tensorflow/tfjs';
// Imported for its side effect: the stock wasm kernels must be registered before they are replaced.
import '@tensorflow/tfjs-backend-wasm';
import type { KernelConfig, KernelFunc, NamedAttrMap, TensorInfo } from '@tensorflow/tfjs';
import { ClawrlError } from '../spec/clawrl-error.js';
import { wasmBatchMatMulConfig } from './wasm-batch-mat-mul.js';
import { heapTypedArray, tensorData, wasmInternals } from './wasm-backend-internals.js';

/*
 * Kernel replacements for tfjs-backend-wasm 4.22 (see the engine spike): BatchMatMul lowered to
 * XNNPACK, Identity and same-dtype Cast sharing buffers, the missing UnsortedSegmentSum (the
 * gradient of tf.gather), a row-copy GatherV2, and fixes for two stock kernels that return wrong values (Cast to bool,
 * OneHot with a float dtype). They use internal kernel APIs; tfjs is pinned, and the tests beside this
 * file compare every patched kernel against the cpu backend.
 */

interface KernelArguments {
  inputs: Record<string, TensorInfo | undefined>;
  backend: unknown;
  attrs?: NamedAttrMap;
}

function requiredInput(args: KernelArguments, name: string): TensorInfo {
  const input = args.inputs[name];
  if (input === undefined) throw new ClawrlError('internal_error', `kernel input ${name} is missing`);
  return input;
}

/**
 * The engine clones every tensor it saves for backward through Identity; the stock wasm kernel
 * copies the buffer and gives it a new id, doubling memory and defeating XNNPACK's packed-weight
 * cache. Sharing by refcount is what the cpu backend does.
 */
function shareBuffer(args: KernelArguments, x: TensorInfo): TensorInfo {
  wasmInternals(args.backend).incRef(x.dataId);
  return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
}

function identity(args: KernelArguments): TensorInfo {
  return shareBuffer(args, requiredInput(args, 'x'));
}

function makeCast(stockCast: KernelFunc | undefined): (args: KernelArguments) => TensorInfo {
  return (args) => {
    const x = requiredInput(args, 'x');
    if (args.attrs?.['dtype'] === x.dtype) return shareBuffer(args, x);
    if (args.attrs?.['dtype'] === 'bool') return castToBool(args, x);
    if (stockCast === undefined) throw new ClawrlError('internal_error', 'the stock wasm Cast kernel is missing');
    return stockCast(args as unknown as Parameters<KernelFunc>[0]) as TensorInfo;
  };
}

/** The stock kernel copies with TypedArray.set, which turns 3.5 into 3 and 254 instead of true. */
function castToBool(args: KernelArguments, x: TensorInfo): TensorInfo {
  const backend = wasmInternals(args.backend);
  const out = backend.makeOutput(x.shape, 'bool');
  const outValues = heapTypedArray(backend, out);
  const xValues = heapTypedArray(backend, x);
  for (let index = 0; index < xValues.length; index++) outValues[index] = xValues[index] !== 0 ? 1 : 0;
  return out;
}

/** Rows of `x` summed into `numSegments` rows by segment id; ids outside [0, numSegments) are dropped. */
function unsortedSegmentSum(args: KernelArguments): TensorInfo {
  const x = requiredInput(args, 'x');
  const segmentIds = requiredInput(args, 'segmentIds');
  const numSegments = Number(args.attrs?.['numSegments']);
  const backend = wasmInternals(args.backend);
  const idRank = segmentIds.shape.length;
  const rowCount = segmentIds.shape.reduce((product, size) => product * size, 1);
  if (segmentIds.shape.some((size, index) => x.shape[index] !== size)) {
    throw new ClawrlError(
      'invalid_request',
      `segmentIds shape [${segmentIds.shape.join(',')}] must be a prefix of x shape [${x.shape.join(',')}]`,
    );
  }
  const innerShape = x.shape.slice(idRank);
  const inner = innerShape.reduce((product, size) => product * size, 1);
  const out = backend.makeOutput([numSegments, ...innerShape], x.dtype);
  // Typed views are taken after makeOutput: its allocation may grow (and detach) the heap.
  const outValues = heapTypedArray(backend, out);
  const xValues = heapTypedArray(backend, x);
  const ids = heapTypedArray(backend, segmentIds);
  outValues.fill(0);
  for (let row = 0; row < rowCount; row++) {
    const segment = ids[row] ?? -1;
    if (segment < 0 || segment >= numSegments) continue;
    const source = row * inner;
    const target = segment * inner;
    for (let index = 0; index < inner; index++) {
      outValues[target + index] = (outValues[target + index] ?? 0) + (xValues[source + index] ?? 0);
    }
  }
  return out;
}

/** The stock kernel ignores the dtype attribute and always writes int32 bits (float ones read as 1e-45). */
function oneHot(args: KernelArguments): TensorInfo {
  const indices = requiredInput(args, 'indices');
  const depth = Number(args.attrs?.['depth']);
  const onValue = Number(args.attrs?.['onValue'] ?? 1);
  const offValue = Number(args.attrs?.['offValue'] ?? 0);
  const dtype = (args.attrs?.['dtype'] ?? 'int32') as TensorInfo['dtype'];
  const backend = wasmInternals(args.backend);
  const out = backend.makeOutput([...indices.shape, depth], dtype);
  const outValues = heapTypedArray(backend, out);
  const indexValues = heapTypedArray(backend, indices);
  outValues.fill(offValue);
  for (let row = 0; row < indexValues.length; row++) {
    const index = indexValues[row] ?? -1;
    if (index >= 0 && index < depth) outValues[row * depth + index] = onValue;
  }
  return out;
}

/**
 * Rows of x by index (axis 0, no batch dimensions: an embedding lookup) as one heap copy per row.
 * The stock kernel walks every element with stride arithmetic, ~2 ms for 256 rows of a
 * [8192, 256] embedding. Other gathers, other dtypes and out-of-range indices (whose error the
 * stock kernel raises) go to the stock kernel.
 */
function makeGather(stockGather: KernelFunc | undefined): (args: KernelArguments) => TensorInfo {
  return (args) => {
    const x = requiredInput(args, 'x');
    const indices = requiredInput(args, 'indices');
    const axis = Number(args.attrs?.['axis'] ?? 0);
    const rowCount = x.shape[0] ?? 0;
    const stock = () => {
      if (stockGather === undefined) throw new ClawrlError('internal_error', 'the stock wasm GatherV2 kernel is missing');
      return stockGather(args as unknown as Parameters<KernelFunc>[0]) as TensorInfo;
    };
    const rowsAxis = axis === 0 || axis === -x.shape.length;
    if (!rowsAxis || Number(args.attrs?.['batchDims'] ?? 0) !== 0 || x.shape.length === 0) return stock();
    if ((x.dtype !== 'float32' && x.dtype !== 'int32') || indices.dtype !== 'int32') return stock();
    const backend = wasmInternals(args.backend);
    if (heapTypedArray(backend, indices).some((index) => index < 0 || index >= rowCount)) return stock();
    const rowShape = x.shape.slice(1);
    const rowBytes = 4 * rowShape.reduce((product, size) => product * size, 1);
    const out = backend.makeOutput([...indices.shape, ...rowShape], x.dtype);
    // Read after makeOutput: its allocation may grow (and detach) the heap.
    const heap = backend.wasm.HEAPU8;
    const source = tensorData(backend, x).memoryOffset;
    const target = tensorData(backend, out).memoryOffset;
    heapTypedArray(backend, indices).forEach((index, row) => {
      heap.copyWithin(target + row * rowBytes, source + index * rowBytes, source + (index + 1) * rowBytes);
    });
    return out;
  };
}

let patchesApplied = false;
const stockKernels = new Map<string, KernelConfig>();

function replaceKernel(config: KernelConfig): void {
  const stock = tf.getKernel(config.kernelName, config.backendName);
  if (stock !== undefined) {
    stockKernels.set(config.kernelName, stock);
    tf.unregisterKernel(config.kernelName, config.backendName);
  }
  tf.registerKernel(config);
}

/**
 * Registers the replacement kernels for the 'wasm' backend. Idempotent, and safe before or after
 * the backend initialises: the only setup function (GatherV2's fallback) is the stock one.
 */
export function applyWasmKernelPatches(): void {
  if (patchesApplied) return;
  const stockCast = tf.getKernel('Cast', 'wasm')?.kernelFunc;
  const stockGather = tf.getKernel('GatherV2', 'wasm');
  replaceKernel(wasmBatchMatMulConfig);
  replaceKernel({ kernelName: 'Identity', backendName: 'wasm', kernelFunc: identity as unknown as KernelFunc });
  replaceKernel({ kernelName: 'Cast', backendName: 'wasm', kernelFunc: makeCast(stockCast) as unknown as KernelFunc });
  replaceKernel({ kernelName: 'OneHot', backendName: 'wasm', kernelFunc: oneHot as unknown as KernelFunc });
  // The fallback calls the stock kernel, whose setup (its cwrap) must still run when the backend starts.
  replaceKernel({
    kernelName: 'GatherV2',
    backendName: 'wasm',
    ...(stockGather?.setupFunc === undefined ? {} : { setupFunc: stockGather.setupFunc }),
    kernelFunc: makeGather(stockGather?.kernelFunc) as unknown as KernelFunc,
  });
  replaceKernel({
    kernelName: 'UnsortedSegmentSum',
    backendName: 'wasm',
    kernelFunc: unsortedSegmentSum as unknown as KernelFunc,
  });
  patchesApplied = true;
}

/** Restores the stock wasm kernels; for measuring what the patches buy. */
export function removeWasmKernelPatches(): void {
  if (!patchesApplied) return;
  for (const kernelName of patchedWasmKernels) {
    tf.unregisterKernel(kernelName, 'wasm');
    const stock = stockKernels.get(kernelName);
    if (stock === undefined) continue;
    tf.registerKernel(stock);
    // A backend initialised while the patches were in place never ran the stock setup (its cwrap).
    const backend = tf.findBackend('wasm');
    if (backend !== null && stock.setupFunc !== undefined) stock.setupFunc(backend);
  }
  stockKernels.clear();
  patchesApplied = false;
}

/** Kernel names this module replaces or adds on the wasm backend. */
export const patchedWasmKernels = ['BatchMatMul', 'Identity', 'Cast', 'OneHot', 'GatherV2', 'UnsortedSegmentSum'] as const;
