import type { WasmBackendInternals } from './wasm-backend-internals.js';

/*
 * Transposed copies of matmul right-hand sides that recur, for the BatchMatMul kernel. Backward
 * through a frozen linear y = x·W asks for dy·Wᵀ with the same W on every training step; without a
 * copy each call transposes W (or the product) and XNNPACK packs a fresh buffer, which made those
 * products ~1.5× slower than the forward ones. The copy has an id of its own, so XNNPACK's packed
 * weights for it are cached too, and the product runs exactly like a forward one.
 *
 * A buffer is copied the second time it is seen transposed (an activation is seen once), while the
 * copies fit in `budgetBytes`; a copy is freed with its source (the C++ disposal of its id).
 */

export interface TransposedOperand {
  id: number;
  offset: number;
}

export interface TransposedOperandCache {
  /**
   * The transposed copy of the `elementCount`-float buffer the C++ side knows as `id` (a tensor's
   * own buffer, never a view), made by `transpose` into its target when it is worth keeping;
   * undefined when the caller should transpose as usual.
   */
  lookup(id: number, elementCount: number, transpose: (target: TransposedOperand) => void): TransposedOperand | undefined;
  /** Bytes the copies hold now. */
  readonly bytes: number;
}

/** Most bytes of transposed copies one wasm backend keeps. */
export const transposedOperandBudgetBytes = 256 * 1024 * 1024;

const caches = new WeakMap<object, TransposedOperandCache>();

interface Entry extends TransposedOperand {
  bytes: number;
}

export function transposedOperandCache(backend: WasmBackendInternals, budgetBytes = transposedOperandBudgetBytes): TransposedOperandCache {
  const existing = caches.get(backend);
  if (existing !== undefined) return existing;
  const seen = new Set<number>();
  const entries = new Map<number, Entry>();
  let bytes = 0;
  const tfjs = backend.wasm.tfjs;
  const disposeData = tfjs.disposeData.bind(tfjs);
  tfjs.disposeData = (id: number): void => {
    disposeData(id);
    seen.delete(id);
    const entry = entries.get(id);
    if (entry === undefined) return;
    entries.delete(id);
    bytes -= entry.bytes;
    disposeData(entry.id);
    backend.wasm._free(entry.offset);
  };
  const cache: TransposedOperandCache = {
    lookup(id, elementCount, transpose) {
      const entry = entries.get(id);
      if (entry !== undefined) return entry;
      if (!seen.has(id)) {
        seen.add(id);
        return undefined;
      }
      const size = elementCount * 4;
      if (bytes + size > budgetBytes) return undefined;
      const copyOffset = backend.wasm._malloc(size) >>> 0;
      const copyId = backend.dataIdNextNumber++;
      tfjs.registerTensor(copyId, elementCount, copyOffset);
      const made = { id: copyId, offset: copyOffset, bytes: size };
      transpose(made);
      entries.set(id, made);
      bytes += size;
      return made;
    },
    get bytes() {
      return bytes;
    },
  };
  caches.set(backend, cache);
  return cache;
}
