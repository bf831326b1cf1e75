import type { DataType, TensorInfo } from '@tensorflow/tfjs';
import { ClawrlError } from '../spec/clawrl-error.js';

/**
 * The parts of `BackendWasm` (tfjs-backend-wasm 4.22, dist/backend_wasm.js) and of its emscripten
 * module that the kernel patches touch. tfjs publishes `BackendWasm` typed against @types/emscripten,
 * which this project does not install, and hides `dataIdNextNumber`; so the patches see the backend
 * through this narrow, documented view instead. Re-check every member when tfjs is upgraded.
 */
export interface WasmTensorData {
  /** The id the C++ side knows the buffer by (`register_tensor`). */
  id: number;
  memoryOffset: number;
  shape: number[];
  dtype: DataType;
  refCount: number;
}

type CwrapArgument = number | boolean | Uint8Array;

export interface WasmModuleInternals {
  HEAPU8: Uint8Array;
  _malloc(bytes: number): number;
  _free(offset: number): void;
  cwrap(
    name: string,
    returnType: null,
    argumentTypes: Array<'number' | 'array'>,
  ): (...values: CwrapArgument[]) => void;
  tfjs: {
    registerTensor(id: number, elementCount: number, memoryOffset: number): void;
    disposeData(id: number): void;
  };
}

export interface WasmBackendInternals {
  wasm: WasmModuleInternals;
  dataIdNextNumber: number;
  dataIdMap: {
    get(dataId: object): WasmTensorData | undefined;
    has(dataId: object): boolean;
  };
  makeOutput(shape: number[], dtype: DataType): TensorInfo;
  incRef(dataId: object): void;
  disposeData(dataId: object, force?: boolean): boolean;
}

export function wasmInternals(backend: unknown): WasmBackendInternals {
  const candidate = backend as Partial<WasmBackendInternals> | null;
  if (candidate === null || typeof candidate !== 'object' || candidate.wasm === undefined || candidate.dataIdMap === undefined) {
    throw new ClawrlError('internal_error', 'expected the tfjs wasm backend');
  }
  return candidate as WasmBackendInternals;
}

export function tensorData(backend: WasmBackendInternals, info: TensorInfo): WasmTensorData {
  const data = backend.dataIdMap.get(info.dataId);
  if (data === undefined) {
    throw new ClawrlError('internal_error', 'tensor data is not on the wasm backend (already disposed?)');
  }
  return data;
}

/** A Float32Array over part of the heap. Rebuild it after any allocation: heap growth detaches it. */
export function heapFloat32(backend: WasmBackendInternals, offset: number, elementCount: number): Float32Array {
  return new Float32Array(backend.wasm.HEAPU8.buffer, offset, elementCount);
}

export function heapTypedArray(
  backend: WasmBackendInternals,
  info: TensorInfo,
): Float32Array | Int32Array | Uint8Array {
  const { memoryOffset } = tensorData(backend, info);
  const elementCount = info.shape.reduce((product, size) => product * size, 1);
  const buffer = backend.wasm.HEAPU8.buffer;
  switch (info.dtype) {
    case 'float32':
      return new Float32Array(buffer, memoryOffset, elementCount);
    case 'int32':
      return new Int32Array(buffer, memoryOffset, elementCount);
    case 'bool':
      return new Uint8Array(buffer, memoryOffset, elementCount);
    default:
      throw new ClawrlError('unsupported', `dtype ${info.dtype} is not supported by this wasm kernel`);
  }
}

/** The raw C++ kernels the patches call with their own ids (cwrap'd once per backend instance). */
export interface WasmRawKernels {
  /** `BatchMatMul(aId, aShape, aRank, bId, bShape, bRank, transposeA, transposeB, outId)`. */
  batchMatMul: (...values: CwrapArgument[]) => void;
  /** `Transpose(xId, xShape, rank, cppDtype, outId, perm, permLength)`. */
  transpose: (...values: CwrapArgument[]) => void;
}

const rawKernelsByBackend = new WeakMap<object, WasmRawKernels>();

export function rawKernels(backend: WasmBackendInternals): WasmRawKernels {
  let kernels = rawKernelsByBackend.get(backend);
  if (kernels === undefined) {
    kernels = {
      batchMatMul: backend.wasm.cwrap('BatchMatMul', null, [
        'number',
        'array',
        'number',
        'number',
        'array',
        'number',
        'number',
        'number',
        'number',
      ]),
      transpose: backend.wasm.cwrap('Transpose', null, ['number', 'array', 'number', 'number', 'number', 'array', 'number']),
    };
    rawKernelsByBackend.set(backend, kernels);
  }
  return kernels;
}

export function int32Bytes(values: number[]): Uint8Array {
  return new Uint8Array(new Int32Array(values).buffer);
}

/**
 * Heap ids and buffers that live for one kernel call. A "view" gives the C++ side an id for a slice
 * of an existing buffer without copying; a "buffer" is scratch memory. Every id must be disposed on
 * the C++ side, because XNNPACK caches a packed copy of each matmul right-hand side by id and only
 * drops it in the id's disposal callback.
 */
export class HeapScope {
  private readonly ids: number[] = [];
  private readonly buffers: number[] = [];

  constructor(private readonly backend: WasmBackendInternals) {}

  view(offset: number, elementCount: number): number {
    const id = this.backend.dataIdNextNumber++;
    this.backend.wasm.tfjs.registerTensor(id, elementCount, offset);
    this.ids.push(id);
    return id;
  }

  buffer(elementCount: number): { id: number; offset: number } {
    const bytes = elementCount * 4;
    const offset = this.backend.wasm._malloc(bytes) >>> 0;
    if (offset === 0 && bytes > 0) {
      throw new ClawrlError('unsupported', `the wasm heap cannot hold ${bytes} more bytes of scratch memory (4 GiB limit)`);
    }
    this.buffers.push(offset);
    return { id: this.view(offset, elementCount), offset };
  }

  /** Disposes one view early, so that XNNPACK frees the packed copy it made for it. */
  releaseView(id: number): void {
    const index = this.ids.lastIndexOf(id);
    if (index >= 0) {
      this.ids.splice(index, 1);
      this.backend.wasm.tfjs.disposeData(id);
    }
  }

  release(): void {
    for (const id of this.ids.splice(0)) this.backend.wasm.tfjs.disposeData(id);
    for (const offset of this.buffers.splice(0)) this.backend.wasm._free(offset);
  }
}
