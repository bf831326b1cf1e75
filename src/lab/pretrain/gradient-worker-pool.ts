/**
 * Data-parallel gradient workers (one wasm instance per core; wasm threads do nothing in Node).
 * A batch is split by token count, each worker returns the gradient of its share, the shares are
 * summed here and every worker applies the same AdamW step to the sum.
 */
import { Worker } from 'node:worker_threads';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PretrainWorkerData, PretrainWorkerRequest, PretrainWorkerResponse, TensorMap } from './pretrain-worker-protocol.js';
import { transferablesOf } from './pretrain-worker-protocol.js';
import type { TrainingSequenceData } from './training-sequence.js';

export interface BatchGradientResult {
  /** Mean negative log-likelihood per target token over the batch. */
  loss: number;
  targetTokens: number;
  tokens: number;
}

export interface ExportedTrainingState {
  weights: TensorMap;
  optimizerState: { stepCount: number; first: TensorMap; second: TensorMap };
}

export interface GradientWorkerPool {
  readonly size: number;
  /** Forward-backward over the batch, then one optimizer step at `learningRate` on every worker. */
  trainStep(batch: readonly TrainingSequenceData[], learningRate: number): Promise<BatchGradientResult & { gradientNorm: number }>;
  exportState(): Promise<ExportedTrainingState>;
  close(): Promise<void>;
}

interface WorkerHandle {
  worker: Worker;
  request(message: PretrainWorkerRequest, transfer?: ArrayBuffer[]): Promise<PretrainWorkerResponse>;
}

function startWorker(url: URL, data: PretrainWorkerData): Promise<WorkerHandle> {
  const worker = new Worker(url, { workerData: data });
  const waiting: { resolve: (message: PretrainWorkerResponse) => void; reject: (error: Error) => void }[] = [];
  let failure: Error | null = null;
  const fail = (error: Error): void => {
    failure = error;
    for (const pending of waiting.splice(0)) pending.reject(error);
  };
  return new Promise((resolve, reject) => {
    let ready = false;
    worker.on('error', (error) => {
      fail(error);
      if (!ready) reject(error);
    });
    worker.on('exit', (code) => {
      if (code !== 0) fail(new ClawrlError('internal_error', `pretraining worker exited with code ${code}`));
    });
    worker.on('message', (message: PretrainWorkerResponse) => {
      if (message.kind === 'ready') {
        ready = true;
        resolve({
          worker,
          request(request, transfer = []) {
            if (failure !== null) return Promise.reject(failure);
            return new Promise((resolveRequest, rejectRequest) => {
              waiting.push({ resolve: resolveRequest, reject: rejectRequest });
              worker.postMessage(request, transfer);
            });
          },
        });
        return;
      }
      const pending = waiting.shift();
      if (pending === undefined) return;
      if (message.kind === 'error') pending.reject(new ClawrlError('internal_error', `pretraining worker: ${message.message}`));
      else pending.resolve(message);
    });
  });
}

/** Splits sequences into `parts` shares of similar cost (longest first, each to the lightest share). */
export function splitByCost(batch: readonly TrainingSequenceData[], parts: number): TrainingSequenceData[][] {
  const shares: TrainingSequenceData[][] = Array.from({ length: parts }, () => []);
  const costs = new Array<number>(parts).fill(0);
  const ordered = [...batch].sort((first, second) => second.tokenIds.length - first.tokenIds.length);
  for (const sequence of ordered) {
    let lightest = 0;
    for (let index = 1; index < parts; index += 1) if ((costs[index] ?? 0) < (costs[lightest] ?? 0)) lightest = index;
    shares[lightest]?.push(sequence);
    costs[lightest] = (costs[lightest] ?? 0) + sequence.tokenIds.length;
  }
  return shares;
}

function addInto(total: TensorMap, addition: TensorMap): void {
  for (const [name, tensor] of addition) {
    const sum = total.get(name);
    if (sum === undefined) {
      total.set(name, tensor);
      continue;
    }
    const target = sum.data;
    const source = tensor.data;
    for (let index = 0; index < target.length; index += 1) target[index] = (target[index] ?? 0) + (source[index] ?? 0);
  }
}

function copyOf(map: TensorMap): TensorMap {
  return new Map([...map].map(([name, tensor]) => [name, { shape: tensor.shape, data: new Float32Array(tensor.data) }]));
}

export async function createGradientWorkerPool(options: { size: number; workerUrl: URL; data: PretrainWorkerData }): Promise<GradientWorkerPool> {
  const handles = await Promise.all(Array.from({ length: options.size }, () => startWorker(options.workerUrl, options.data)));
  return {
    size: handles.length,
    async trainStep(batch, learningRate) {
      let targetTokens = 0;
      let tokens = 0;
      for (const sequence of batch) {
        targetTokens += sequence.tokenIds.length - sequence.targetStart;
        tokens += sequence.tokenIds.length;
      }
      const shares = splitByCost(batch, handles.length);
      const results = await Promise.all(
        handles.map((handle, index) => {
          const share = shares[index] ?? [];
          if (share.length === 0) return Promise.resolve(null);
          return handle.request({ kind: 'gradients', sequences: share, lossScale: 1 / targetTokens });
        }),
      );
      const sum: TensorMap = new Map();
      let negativeLogLikelihood = 0;
      for (const result of results) {
        if (result === null) continue;
        if (result.kind !== 'gradients') throw new ClawrlError('internal_error', `unexpected worker reply ${result.kind}`);
        addInto(sum, result.gradients);
        negativeLogLikelihood += result.negativeLogLikelihood;
      }
      const applied = await Promise.all(
        handles.map((handle, index) => {
          // The last worker takes the sum itself; the others get copies (a transfer empties the buffers).
          const gradients = index === handles.length - 1 ? sum : copyOf(sum);
          return handle.request({ kind: 'apply', gradients, learningRate }, transferablesOf(gradients));
        }),
      );
      const first = applied[0];
      const gradientNorm = first?.kind === 'applied' ? first.gradientNorm : Number.NaN;
      return { loss: negativeLogLikelihood / targetTokens, targetTokens, tokens, gradientNorm };
    },
    async exportState() {
      const handle = handles[0];
      if (handle === undefined) throw new ClawrlError('internal_error', 'no pretraining worker');
      const reply = await handle.request({ kind: 'export' });
      if (reply.kind !== 'exported') throw new ClawrlError('internal_error', `unexpected worker reply ${reply.kind}`);
      return { weights: reply.weights, optimizerState: reply.optimizerState };
    },
    async close() {
      await Promise.all(
        handles.map(
          (handle) =>
            new Promise<void>((resolve) => {
              handle.worker.once('exit', () => resolve());
              handle.worker.postMessage({ kind: 'close' } satisfies PretrainWorkerRequest);
            }),
        ),
      );
    },
  };
}
