import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import ts from 'typescript';
import { beforeAll, describe, expect, test } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import { initializeTensorBackend, type TensorFlow } from './initialize-tensor-backend.js';
import { ensureFits, maximumWasmHeapBytes, wasmHeapBytes, wasmMemoryUsage } from './wasm-memory.js';

let tf: TensorFlow;

beforeAll(async () => {
  tf = await initializeTensorBackend({ backend: 'wasm' });
});

describe('wasm heap accounting', () => {
  test('counts tensor buffers as they are allocated and freed', async () => {
    await tf.setBackend('wasm');
    const before = wasmMemoryUsage()?.allocatedBytes ?? Number.NaN;
    const tensor = tf.zeros([1024, 256]);
    expect(wasmMemoryUsage()?.allocatedBytes).toBe(before + 1024 * 256 * 4);
    expect(wasmHeapBytes()).toBeGreaterThanOrEqual(1024 * 256 * 4);
    tensor.dispose();
    expect(wasmMemoryUsage()?.allocatedBytes).toBe(before);
  });

  test('ensureFits passes small requests and rejects ones past the 4 GiB heap', async () => {
    await tf.setBackend('wasm');
    expect(() => ensureFits(16 * 1024 * 1024)).not.toThrow();
    let caught: unknown;
    try {
      ensureFits(maximumWasmHeapBytes, { purpose: 'scoring 100000 tokens' });
    } catch (error) {
      caught = error;
    }
    expect(ClawrlError.isInstance(caught)).toBe(true);
    expect((caught as ClawrlError).code).toBe('context_length_exceeded');
    expect((caught as ClawrlError).message).toContain('scoring 100000 tokens');
    expect(() => ensureFits(maximumWasmHeapBytes, { code: 'unsupported' })).toThrow(/4 GiB/);
  });

  test('is inactive on the cpu backend', async () => {
    await tf.setBackend('cpu');
    expect(wasmMemoryUsage()).toBeUndefined();
    expect(() => ensureFits(maximumWasmHeapBytes * 2)).not.toThrow();
    await tf.setBackend('wasm');
  });
});

/**
 * Worker threads cannot load TypeScript, so the module (and the error class it imports) is
 * transpiled into a folder under node_modules, where '@tensorflow/*' still resolves.
 */
function transpileTensorModule(): string {
  const sourceRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const outputRoot = path.resolve(sourceRoot, '..', 'node_modules', '.cache', `clawrl-tensor-worker-${process.pid}`);
  const files = [
    ...readdirSync(path.join(sourceRoot, 'tensor'))
      .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
      .map((name) => path.join('tensor', name)),
    path.join('spec', 'clawrl-error.ts'),
  ];
  for (const file of files) {
    const output = ts.transpileModule(readFileSync(path.join(sourceRoot, file), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    });
    const target = path.join(outputRoot, file.replace(/\.ts$/, '.js'));
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, output.outputText);
  }
  writeFileSync(path.join(outputRoot, 'package.json'), '{"type":"module"}');
  writeFileSync(
    path.join(outputRoot, 'worker.js'),
    `import { parentPort, workerData } from 'node:worker_threads';
import { initializeTensorBackend } from './tensor/initialize-tensor-backend.js';
const tf = await initializeTensorBackend({ backend: 'wasm' });
const product = tf.matMul(tf.fill([3, 4], workerData.value), tf.ones([2, 4]), false, true);
const gathered = tf.grad((table) => tf.sum(tf.gather(table, tf.tensor1d([1, 1], 'int32'))))(tf.ones([3, 2]));
parentPort.postMessage({ backend: tf.getBackend(), product: Array.from(product.dataSync()), gradient: Array.from(gathered.dataSync()) });
`,
  );
  return outputRoot;
}

describe('worker threads', () => {
  test('each worker initialises its own patched wasm instance, quietly', async () => {
    const root = transpileTensorModule();
    try {
      const runWorker = (value: number) =>
        new Promise<{ message: { backend: string; product: number[]; gradient: number[] }; output: string }>((resolve, reject) => {
          const worker = new Worker(path.join(root, 'worker.js'), { workerData: { value }, stdout: true, stderr: true });
          let output = '';
          worker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
          worker.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
          worker.once('message', (message) => {
            void worker.terminate().then(() => resolve({ message, output }));
          });
          worker.once('error', reject);
        });
      const [first, second] = await Promise.all([runWorker(2), runWorker(3)]);
      expect(first.message.backend).toBe('wasm');
      expect(first.message.product).toEqual(new Array(6).fill(8));
      expect(second.message.product).toEqual(new Array(6).fill(12));
      expect(first.message.gradient).toEqual([0, 0, 2, 2, 0, 0]);
      expect(first.output + second.output).toBe('');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
