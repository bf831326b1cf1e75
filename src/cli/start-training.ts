/**
 * Wires policy serving and the trainer for `clawrl serve`. Serving always syncs the engine with
 * the store's active version (so a restart serves what was served) and rollbacks work even
 * without training. Training runs only when it can publish what it learns: not with `--no-train`,
 * and only with an engine that loads policy versions and a local model folder for the trainer
 * worker; otherwise it is off with a warning saying why, and the server serves and records as usual.
 */
import path from 'node:path';
import { createLocalTrainingEngine } from '../engines/local/create-local-training-engine.js';
import type { PolicyControl } from '../gateway/policy-routes.js';
import type { InferenceEngine } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { RecordStore } from '../spec/record-store.js';
import type { TrainingEngine } from '../spec/training-engine.js';
import { createTrainer, type Trainer } from '../trainer/create-trainer.js';
import { createPolicyServing } from '../trainer/policy-serving.js';
import { localModelDirectoryOf, servedModelNameOf } from './create-inference-engine.js';

export interface TrainingConfiguration {
  data: string;
  model: string;
  servedModel: string | undefined;
  noTrain: boolean;
  trainEvery: number;
  trainParams: 'lora' | 'full';
  maxStaleness: number;
  learningRate: number | undefined;
  adamBeta1: number;
  adamBeta2: number;
  weightDecay: number;
  loraRank: number;
  loraAlpha: number;
  klCoefficient: number;
}

export interface RunningTraining {
  policies: PolicyControl;
  close(): Promise<void>;
}

/** The learning rate when none is given: what the tiny-model spike measured for builtin:tiny, conservative otherwise. */
export function defaultLearningRate(model: string, trainParams: 'lora' | 'full'): number {
  if (model === 'builtin:tiny') return trainParams === 'full' ? 1e-3 : 1e-2;
  return trainParams === 'full' ? 1e-5 : 1e-4;
}

function whyTrainingIsOff(configuration: TrainingConfiguration, engine: InferenceEngine): string | null {
  if (configuration.noTrain) return null;
  if (!engine.capabilities.policyLoading) return `the ${engine.engineId} engine cannot load policy versions (for vLLM/SGLang give it an adapter directory)`;
  try {
    localModelDirectoryOf(configuration.model);
  } catch (error) {
    return `the trainer needs the model's weights in a local folder (--model): ${error instanceof Error ? error.message : String(error)}`;
  }
  return null;
}

export async function startTraining(
  configuration: TrainingConfiguration,
  dependencies: { store: RecordStore; engine: InferenceEngine; logger: Logger; now: () => number },
): Promise<RunningTraining> {
  const { store, engine, logger, now } = dependencies;
  const serving = createPolicyServing({ store, engine, logger, now });
  await serving.start();
  const reason = whyTrainingIsOff(configuration, engine);
  if (configuration.noTrain || reason !== null) {
    if (reason !== null) logger.warn(`training is off: ${reason}; serving and recording only (pass --no-train to silence this)`);
    return {
      policies: { training: null, activate: async (version) => void (await serving.activate(version)) },
      close: async () => undefined,
    };
  }
  const learningRate = configuration.learningRate ?? defaultLearningRate(configuration.model, configuration.trainParams);
  let trainingEngine: TrainingEngine | undefined;
  let trainer: Trainer | undefined;
  try {
    trainingEngine = await createLocalTrainingEngine({
      modelDirectory: localModelDirectoryOf(configuration.model),
      modelId: servedModelNameOf(configuration),
      checkpointDirectory: path.join(configuration.data, 'checkpoints'),
      trainParams: configuration.trainParams,
      lora: { rank: configuration.loraRank, alpha: configuration.loraAlpha },
      optimizer: { learningRate, beta1: configuration.adamBeta1, beta2: configuration.adamBeta2, weightDecay: configuration.weightDecay },
    });
    trainer = createTrainer({
      store,
      trainingEngine,
      serving,
      logger,
      now,
      // One trainer per store in one-process mode: a stable id lets a restart release its own leases.
      workerId: 'trainer',
      trainEvery: configuration.trainEvery,
      maxStaleness: configuration.maxStaleness,
      loss: { klCoefficient: configuration.klCoefficient },
    });
    await trainer.start();
  } catch (error) {
    await trainer?.close();
    await trainingEngine?.close();
    throw error;
  }
  logger.info('training on', { trainParams: configuration.trainParams, learningRate, trainEvery: configuration.trainEvery, maxStaleness: configuration.maxStaleness });
  const running = trainer;
  const runningEngine = trainingEngine;
  return {
    policies: { training: running, activate: (version) => running.activate(version) },
    async close() {
      await running.close();
      await runningEngine.close();
    },
  };
}
