import * as tf from '@tensorflow/tfjs';
import { ClawrlError, type ClawrlErrorCode } from '../spec/clawrl-error.js';
import { wasmInternals, type WasmBackendInternals } from './wasm-backend-internals.js';

/**
 * wasm32 can address at most this many bytes (emscripten's getHeapMax() in tfjs-backend-wasm 4.22).
 * Running past it does not throw a JS error: malloc returns 0 and tfjs writes through offset 0, or
 * emscripten aborts with "memory access out of bounds". So requests are checked up front.
 */
export const maximumWasmHeapBytes = 4_294_901_760;

/** Kept free for what the JS side cannot see: XNNPACK packed weights, operator state, fragmentation. */
const defaultSafetyMarginBytes = 256 * 1024 * 1024;

interface HeapAccount {
  allocatedBytes: number;
  sizes: Map<number, number>;
}

const accounts = new WeakMap<object, HeapAccount>();

/**
 * Counts the bytes the JS side allocates on the wasm heap (every tensor buffer and kernel scratch
 * buffer goes through `Module._malloc`), and turns a failed allocation into a ClawrlError instead
 * of a silent write through a null pointer.
 */
export function installHeapAccounting(backend: WasmBackendInternals): void {
  if (accounts.has(backend)) return;
  const account: HeapAccount = { allocatedBytes: 0, sizes: new Map() };
  const wasm = backend.wasm;
  const malloc = wasm._malloc.bind(wasm);
  const free = wasm._free.bind(wasm);
  wasm._malloc = (bytes: number): number => {
    const offset = malloc(bytes);
    if ((offset >>> 0) === 0 && bytes > 0) {
      throw new ClawrlError(
        'unsupported',
        `the wasm heap cannot allocate ${formatBytes(bytes)} more (${formatBytes(account.allocatedBytes)} in tensors, 4 GiB limit)`,
      );
    }
    account.sizes.set(offset >>> 0, bytes);
    account.allocatedBytes += bytes;
    return offset;
  };
  wasm._free = (offset: number): void => {
    const bytes = account.sizes.get(offset >>> 0);
    if (bytes !== undefined) {
      account.sizes.delete(offset >>> 0);
      account.allocatedBytes -= bytes;
    }
    free(offset);
  };
  accounts.set(backend, account);
}

function activeWasmBackend(): WasmBackendInternals | undefined {
  if (tf.getBackend() !== 'wasm') return undefined;
  return wasmInternals(tf.backend());
}

export interface WasmMemoryUsage {
  /** Current size of the wasm linear memory; it only grows. */
  heapBytes: number;
  maximumHeapBytes: number;
  /** Bytes currently allocated from JS: tensor buffers and kernel scratch (not XNNPACK's own). */
  allocatedBytes: number;
}

/** Memory of the active wasm backend, or undefined when another backend is active. */
export function wasmMemoryUsage(): WasmMemoryUsage | undefined {
  const backend = activeWasmBackend();
  if (backend === undefined) return undefined;
  installHeapAccounting(backend);
  return {
    heapBytes: backend.wasm.HEAPU8.buffer.byteLength,
    maximumHeapBytes: maximumWasmHeapBytes,
    allocatedBytes: accounts.get(backend)?.allocatedBytes ?? 0,
  };
}

/** Current size of the wasm linear memory in bytes (0 when the wasm backend is not active). */
export function wasmHeapBytes(): number {
  return wasmMemoryUsage()?.heapBytes ?? 0;
}

export interface EnsureFitsOptions {
  /** 'context_length_exceeded' for a request that is too long, 'unsupported' for a model too big. */
  code?: Extract<ClawrlErrorCode, 'context_length_exceeded' | 'unsupported'>;
  /** What needs the memory, for the message, e.g. "scoring 4096 tokens". */
  purpose?: string;
  safetyMarginBytes?: number;
}

/**
 * Throws a ClawrlError when allocating `bytesNeeded` more on the wasm heap would pass the 4 GiB
 * limit. A no-op on other backends, whose memory is not capped this way.
 */
export function ensureFits(bytesNeeded: number, options: EnsureFitsOptions = {}): void {
  const usage = wasmMemoryUsage();
  if (usage === undefined) return;
  const margin = options.safetyMarginBytes ?? defaultSafetyMarginBytes;
  const available = usage.maximumHeapBytes - margin - usage.allocatedBytes;
  if (bytesNeeded <= available) return;
  const purpose = options.purpose === undefined ? '' : ` for ${options.purpose}`;
  throw new ClawrlError(
    options.code ?? 'context_length_exceeded',
    `not enough wasm memory${purpose}: needs ${formatBytes(bytesNeeded)}, ` +
      `${formatBytes(Math.max(0, available))} available (${formatBytes(usage.allocatedBytes)} in use, 4 GiB wasm heap limit)`,
  );
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
