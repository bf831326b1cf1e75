/**
 * A pretraining gradient worker (see pretrain-worker-protocol.ts). Runs from dist/ as a worker
 * thread; requests are handled one at a time in arrival order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import { readSafetensors } from '../../model/safetensors.js';
import type { FloatTensorData } from '../../model/safetensors.js';
import { loadTransformer } from '../../model/transformer.js';
import type { TransformerOptimizer } from '../../model/transformer.js';
import { transformerShapeFromHuggingFaceConfig } from '../../model/transformer-shape.js';
import { initializeTensorBackend } from '../../tensor/initialize-tensor-backend.js';
import type { PretrainWorkerData, PretrainWorkerRequest, PretrainWorkerResponse, TensorMap } from './pretrain-worker-protocol.js';
import { transferablesOf } from './pretrain-worker-protocol.js';

const port = parentPort;
if (port === null) throw new Error('pretrain-worker must run in a worker thread');
const data = workerData as PretrainWorkerData;

function post(message: PretrainWorkerResponse, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

await initializeTensorBackend({ backend: 'wasm' });
const transformer = loadTransformer({
  shape: transformerShapeFromHuggingFaceConfig(data.configJson),
  weights: data.weights,
  trainParams: 'full',
});
// The learning rate passed at each step overrides this one (the schedule lives in the coordinator).
const optimizer: TransformerOptimizer = transformer.createOptimizer({
  learningRate: 1e-3,
  weightDecay: data.weightDecay,
  maxGradientNorm: data.maxGradientNorm,
  beta2: 0.99,
});
if (data.optimizerState !== null) {
  const moments = new Map<string, { first: FloatTensorData; second: FloatTensorData }>();
  for (const [name, first] of data.optimizerState.first) {
    const second = data.optimizerState.second.get(name);
    if (second !== undefined) moments.set(name, { first, second });
  }
  optimizer.importState({ stepCount: data.optimizerState.stepCount, moments });
}

async function handle(request: Exclude<PretrainWorkerRequest, { kind: 'close' }>): Promise<void> {
  switch (request.kind) {
    case 'gradients': {
      let targetTokens = 0;
      for (const sequence of request.sequences) targetTokens += sequence.tokenIds.length - sequence.targetStart;
      const result = await transformer.forwardBackward({
        sequences: request.sequences,
        // Scaled by the whole batch's target count, so the workers' sums add up to the batch mean.
        loss: (logprobs) => tf.mul(tf.neg(tf.addN(logprobs.map((values) => tf.sum(values)))), request.lossScale) as tf.Scalar,
      });
      const gradients = await transformer.gradients();
      transformer.clearGradients();
      post(
        { kind: 'gradients', gradients, negativeLogLikelihood: result.loss / request.lossScale, targetTokens },
        transferablesOf(gradients),
      );
      return;
    }
    case 'apply': {
      transformer.setGradients(request.gradients);
      const { gradientNorm } = optimizer.step(request.learningRate);
      post({ kind: 'applied', gradientNorm });
      return;
    }
    case 'export': {
      const weights = readSafetensors(await transformer.exportFullWeights({ dtype: 'F32' })).tensors;
      const state = await optimizer.exportState();
      const first: TensorMap = new Map();
      const second: TensorMap = new Map();
      for (const [name, moments] of state.moments) {
        first.set(name, moments.first);
        second.set(name, moments.second);
      }
      post({ kind: 'exported', weights, optimizerState: { stepCount: state.stepCount, first, second } }, transferablesOf(weights, first, second));
      return;
    }
  }
}

let queue = Promise.resolve();
port.on('message', (request: PretrainWorkerRequest) => {
  if (request.kind === 'close') {
    queue = queue.then(() => {
      optimizer.dispose();
      transformer.dispose();
      port.close();
    });
    return;
  }
  queue = queue.then(() =>
    handle(request).catch((error: unknown) => post({ kind: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) })),
  );
});
post({ kind: 'ready' });
