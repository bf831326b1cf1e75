export { initializeTensorBackend, type TensorBackendName, type TensorBackendOptions, type TensorFlow } from './initialize-tensor-backend.js';
export { applyWasmKernelPatches, removeWasmKernelPatches, patchedWasmKernels } from './wasm-kernel-patches.js';
export { logSumExp, logSoftmax, rmsNorm, swiglu, type LogSumExpOptions, type RmsNormOptions } from './operations.js';
export {
  chunkedTokenLogprobs,
  type ChunkedTokenLogprobs,
  type ChunkedTokenLogprobsOptions,
} from './chunked-token-logprobs.js';
export {
  ensureFits,
  maximumWasmHeapBytes,
  wasmHeapBytes,
  wasmMemoryUsage,
  type EnsureFitsOptions,
  type WasmMemoryUsage,
} from './wasm-memory.js';
