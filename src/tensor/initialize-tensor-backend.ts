import { createRequire } from 'node:module';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { ClawrlError } from '../spec/clawrl-error.js';
import { installHeapAccounting } from './wasm-memory.js';
import { applyWasmKernelPatches } from './wasm-kernel-patches.js';
import { wasmInternals } from './wasm-backend-internals.js';

export type TensorBackendName = 'wasm' | 'cpu';
export type TensorFlow = typeof tf;

export interface TensorBackendOptions {
  backend: TensorBackendName;
}

let wasmPathsConfigured = false;

/** The installed package's dist folder, so the .wasm binaries load from disk and nothing is fetched. */
function wasmBinaryFolder(): string {
  const entry = createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm');
  return path.dirname(entry) + path.sep;
}

/**
 * Prepares tfjs in this thread (each worker_thread has its own module instance and wasm heap):
 * quiet logging, kernel patches, the wasm binary location, then the requested backend.
 * Safe to call repeatedly; returns the tf namespace.
 */
export async function initializeTensorBackend(options: TensorBackendOptions = { backend: 'wasm' }): Promise<TensorFlow> {
  // PROD silences the cpu backend's "install tfjs-node" banner and the platform/flag warnings.
  tf.env().set('PROD', true);
  applyWasmKernelPatches();
  if (options.backend === 'wasm' && !wasmPathsConfigured) {
    setWasmPaths(wasmBinaryFolder());
    wasmPathsConfigured = true;
  }
  let selected: boolean;
  try {
    selected = await tf.setBackend(options.backend);
  } catch (error) {
    throw new ClawrlError('configuration_error', `cannot start the tfjs ${options.backend} backend`, { cause: error });
  }
  if (!selected) {
    throw new ClawrlError('configuration_error', `cannot start the tfjs ${options.backend} backend`);
  }
  await tf.ready();
  if (options.backend === 'wasm') installHeapAccounting(wasmInternals(tf.backend()));
  return tf;
}
