/**
 * Wires policy serving and the trainer for `clawrl serve`, `clawrl gateway` and `clawrl trainer`.
 * Serving always syncs with the store's active version (so a restart serves what was served) and
 * rollbacks work even without training; every version served because of training or an
 * activation is announced on the bus (`policy-published`) for the other processes. Training runs
 * only when it can publish what it learns: not with `--no-train`, and only with a local model
 * folder for the trainer worker and, in a process that serves, an engine that loads policy
 * versions; otherwise it is off with a warning saying why, and the process serves and records as usual.
 */
import path from 'node:path';
import type { z } from 'zod';
import { createLocalTrainingEngine } from '../../engines/local/create-local-training-engine.js';
import { createTinkerClient } from '../../engines/tinker/create-tinker-client.js';
import { createTinkerTrainingEngine } from '../../engines/tinker/create-tinker-training-engine.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { PolicyControl } from '../../gateway/policy-control.js';
import type { EventBus } from '../../spec/event-bus.js';
import type { InferenceEngine, PolicyVersion } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { SampleMethod } from '../../spec/records.js';
import type { TrainingEngine } from '../../spec/training-engine.js';
import { createTrainer, type Trainer } from '../../trainer/create-trainer.js';
import type { PolicyServing } from '../../serving/policy-serving.js';
import { configurationSections, type RecipeSettings } from '../configuration/configuration-schema.js';
import type { Resolved } from '../configuration/configuration.js';
import { localModelDirectoryOf, servedModelNameOf, type EngineConfiguration } from './create-inference-engine.js';
import { createPublishingPolicyServing } from '../../serving/create-publishing-policy-serving.js';
import { createStorePolicyServing } from '../../serving/create-store-policy-serving.js';
import { serveActiveVersion } from '../../serving/start-policy-follower.js';
import type { PolicyLifecycle } from '../../serving/policy-lifecycle.js';
import { tinkerApiKeyOf } from '../configuration/tinker-api-key.js';

/**
 * What training reads: the trainer component, the recipe settings, and the model and data folder;
 * the judge's method where this process also judges (`clawrl serve`), so support sets it will
 * not build are not held against the engine.
 */
export type TrainingConfiguration = Resolved<z.infer<typeof configurationSections.trainer>> &
  Pick<EngineConfiguration, 'model' | 'servedModelName' | 'tinkerUrl' | 'tinkerBaseModel'> & { data: string; method?: SampleMethod } & Omit<RecipeSettings, 'judgeWeights' | 'judgeHintGrounding'>;

export interface RunningTraining {
  policies: PolicyControl;
  /** Where committed versions earn their users (gate, canary); null when they serve at once or nothing trains here. */
  lifecycle: PolicyLifecycle | null;
  /** Follows a version another process activated or published (`startPolicyFollower`). */
  follow(activeVersion: PolicyVersion): Promise<void>;
  close(): Promise<void>;
}

export interface TrainingDependencies {
  store: RecordStore;
  /** This process's serving: its engine's, or in the trainer process the store's alone. */
  serving: PolicyServing;
  bus: EventBus;
  /** The serving engine, in a process that serves. */
  engine?: InferenceEngine;
  logger: Logger;
  now: () => number;
  /** Holds the trainer's sample leases: stable across restarts, so a restart releases its own. */
  workerId: string;
  /** Where `CLAWRL_TINKER_API_KEY` is read (default `process.env`). */
  environment?: Record<string, string | undefined>;
  /** The version lifecycle (`--gate`, `--canary-share`), built on the serving the trainer publishes with; absent: each version serves at once. */
  createLifecycle?: (serving: PolicyServing) => PolicyLifecycle;
  /** Told when a user's lineage changed (`--policy-scope user`): a step committed or a version was activated. */
  onUserLineageChange?: () => void;
}

/**
 * Activates `version` in its own lineage: a user's version is recorded as that user's active one
 * (the gateway routes the user's requests to it, the engine's default stays), any other is served.
 */
function activationInLineage(serving: PolicyServing, dependencies: Pick<TrainingDependencies, 'store' | 'onUserLineageChange'>, now: () => number): PolicyControl['activate'] {
  return async (version, reason) => {
    const owner = (await dependencies.store.listPolicyVersions()).find((record) => record.version === version)?.user ?? null;
    if (owner === null) {
      await serving.activate(version, reason);
      return;
    }
    await dependencies.store.activatePolicyVersion(version, now(), reason === undefined ? {} : { reason });
    dependencies.onUserLineageChange?.();
  };
}

/**
 * Starts serving the active version. Processes of one deployment that start together may both
 * find no base version and both record it; the loser finds it recorded and starts again.
 */
export async function startPolicyServing(serving: PolicyServing, store: RecordStore): Promise<PolicyVersion> {
  try {
    return await serving.start();
  } catch (error) {
    if ((await store.trainingSummary()).latestVersion === null) throw error;
    return serving.start();
  }
}

/** The learning rate when none is given: what the tiny-model spike measured for builtin:tiny, conservative otherwise. */
export function defaultLearningRate(model: string, trainParams: 'lora' | 'full'): number {
  if (model === 'builtin:tiny') return trainParams === 'full' ? 1e-3 : 1e-2;
  return trainParams === 'full' ? 1e-5 : 1e-4;
}

function whyTrainingIsOff(configuration: TrainingConfiguration, engine: InferenceEngine | undefined): string | null {
  if (configuration.noTrain) return null;
  if (engine !== undefined && !engine.capabilities.policyLoading) return notServedReason(engine);
  if (engine?.engineId === 'tinker' && configuration.trainer !== 'tinker') return 'the tinker engine samples only versions trained on Tinker: train with --trainer tinker';
  // A Tinker trainer trains on the service: no local weights needed.
  if (configuration.trainer === 'tinker') return null;
  try {
    localModelDirectoryOf(configuration.model);
  } catch (error) {
    return `the trainer needs the model's weights in a local folder (--model): ${error instanceof Error ? error.message : String(error)}`;
  }
  return null;
}

/** Why trained versions would not reach this engine. */
function notServedReason(engine: InferenceEngine): string {
  if (engine.engineId === 'vllm' || engine.engineId === 'sglang') {
    return `trained versions cannot reach the ${engine.engineId} server without --adapter-dir <dir> (a folder clawrl writes and the server reads, at the same path), so none would be served`;
  }
  return `the ${engine.engineId} engine cannot load policy versions`;
}

/** Serving without a trainer in this one process (`--no-train`, or training off): activations still work. */
export async function startServingOnly(dependencies: Omit<TrainingDependencies, 'engine' | 'workerId'>): Promise<RunningTraining> {
  await startPolicyServing(dependencies.serving, dependencies.store);
  const serving = createPublishingPolicyServing(dependencies.serving, dependencies.bus, dependencies.logger);
  return {
    policies: { training: null, activate: activationInLineage(serving, dependencies, dependencies.now), servingStatus: () => [dependencies.serving.status()] },
    lifecycle: null,
    // Followed versions are loaded without a new announcement: they were announced already.
    follow: serveActiveVersion(dependencies.serving),
    close: async () => undefined,
  };
}

/**
 * Serving in a gateway or judge process of a distributed deployment. Unlike one process alone,
 * it never falls back by activating the base version in the store, which would roll back every
 * process: a version it cannot load yet is logged, the base model is served meanwhile, and the
 * policy follower keeps retrying.
 */
export async function startFollowerServing(dependencies: Omit<TrainingDependencies, 'engine' | 'workerId'>): Promise<RunningTraining> {
  const { store, logger, now } = dependencies;
  await startPolicyServing(createStorePolicyServing({ store, logger, now }), store);
  const follow = serveActiveVersion(dependencies.serving);
  const active = (await store.trainingSummary()).activeVersion ?? 0;
  try {
    await follow(active);
    logger.info('serving policy version', { version: active });
  } catch (error) {
    logger.error('cannot serve the active policy version yet; serving the base model and retrying', { version: active, error: String(error) });
  }
  const serving = createPublishingPolicyServing(dependencies.serving, dependencies.bus, logger);
  return {
    policies: { training: null, activate: activationInLineage(serving, dependencies, now), servingStatus: () => [dependencies.serving.status()] },
    lifecycle: null,
    follow,
    close: async () => undefined,
  };
}

async function createTrainingEngine(configuration: TrainingConfiguration, learningRate: number, dependencies: TrainingDependencies): Promise<TrainingEngine> {
  const optimizer = { learningRate, beta1: configuration.adamBeta1, beta2: configuration.adamBeta2, weightDecay: configuration.weightDecay };
  if (configuration.trainer === 'local') {
    return createLocalTrainingEngine({
      modelDirectory: localModelDirectoryOf(configuration.model),
      modelId: servedModelNameOf(configuration),
      checkpointDirectory: path.join(configuration.data, 'checkpoints'),
      trainParams: configuration.trainParams,
      lora: { rank: configuration.loraRank, alpha: configuration.loraAlpha },
      optimizer,
    });
  }
  if (configuration.tinkerUrl === undefined) throw new ClawrlError('configuration_error', '--trainer tinker needs --tinker-url <url> (CLAWRL_TINKER_URL)', { param: 'tinkerUrl' });
  if (configuration.trainParams !== 'lora') throw new ClawrlError('configuration_error', 'Tinker trains LoRA adapters only: --trainer tinker needs --train-params lora', { param: 'trainParams' });
  const apiKey = tinkerApiKeyOf(dependencies.environment ?? process.env, '--trainer tinker');
  // Engines other than Tinker's serve PEFT adapters: each version's archive is downloaded for them
  // (a trainer process does not know what the gateways run, so it downloads too).
  const downloadAdapters = dependencies.engine?.engineId !== 'tinker';
  const client = await createTinkerClient({ url: configuration.tinkerUrl, apiKey, logger: dependencies.logger });
  try {
    // LoRA alpha is no Tinker parameter: the service fixes it (SkyRL: 32, which it cites as Tinker's).
    return await createTinkerTrainingEngine({ client, baseModel: configuration.tinkerBaseModel ?? servedModelNameOf(configuration), loraRank: configuration.loraRank, optimizer, downloadAdapters, maxTrainingClients: configuration.maxTrainingClients, logger: dependencies.logger });
  } catch (error) {
    await client.close();
    throw error;
  }
}

export async function startTraining(configuration: TrainingConfiguration, dependencies: TrainingDependencies): Promise<RunningTraining> {
  const { store, engine, logger, now } = dependencies;
  const reason = whyTrainingIsOff(configuration, engine);
  if (configuration.noTrain || reason !== null) {
    if (reason !== null) logger.warn(`training is off: ${reason}; serving and recording only (pass --no-train to silence this)`);
    return startServingOnly(dependencies);
  }
  await startPolicyServing(dependencies.serving, store);
  const followServing = serveActiveVersion(dependencies.serving);
  const serving = createPublishingPolicyServing(dependencies.serving, dependencies.bus, logger);
  const learningRate = configuration.learningRate ?? defaultLearningRate(configuration.model, configuration.trainParams);
  let trainingEngine: TrainingEngine | undefined;
  let trainer: Trainer | undefined;
  const lifecycle = dependencies.createLifecycle?.(serving) ?? null;
  try {
    await lifecycle?.start();
    trainingEngine = await createTrainingEngine(configuration, learningRate, dependencies);
    trainer = createTrainer({
      ...(lifecycle === null ? {} : { lifecycle }),
      store,
      trainingEngine,
      serving,
      logger,
      now,
      workerId: dependencies.workerId,
      trainEvery: configuration.trainEvery,
      trainEpochs: configuration.trainEpochs,
      maxStaleness: configuration.maxStaleness,
      lossName: configuration.loss,
      loss: { klCoefficient: configuration.klCoefficient, anchorCoefficient: configuration.anchorCoefficient, anchorTopK: configuration.anchorTopK },
      advantages: { rlWeight: configuration.rlWeight, opdWeight: configuration.opdWeight, opdClip: configuration.opdClip, rewardBaseline: configuration.rewardBaseline, groupNormalizeStd: configuration.groupNormalizeStd },
      supportTopK: configuration.method === 'rl' ? 0 : configuration.opdSupportK,
      learningRateDecay: { halfLifeSteps: configuration.learningRateHalfLife },
      policyScope: configuration.policyScope,
      userQuotas: { stepsPerDay: configuration.userStepsPerDay, samplesKept: configuration.userSamplesKept },
      ...(dependencies.onUserLineageChange === undefined ? {} : { onUserLineageChange: dependencies.onUserLineageChange }),
    });
    await trainer.start();
  } catch (error) {
    await trainer?.close();
    await trainingEngine?.close();
    throw error;
  }
  logger.info('training on', { policyScope: configuration.policyScope, trainParams: configuration.trainParams, learningRate, learningRateHalfLife: configuration.learningRateHalfLife ?? null, trainEvery: configuration.trainEvery, trainEpochs: configuration.trainEpochs, maxStaleness: configuration.maxStaleness, ...(configuration.anchorCoefficient > 0 ? { anchorCoefficient: configuration.anchorCoefficient, anchorTopK: configuration.anchorTopK } : {}), ...(configuration.trainer === 'local' ? {} : { trainer: configuration.trainer, maxTrainingClients: configuration.maxTrainingClients }) });
  const running = trainer;
  const runningEngine = trainingEngine;
  return {
    policies: { training: running, activate: (version, reason) => running.activate(version, reason), servingStatus: () => [dependencies.serving.status()] },
    lifecycle: lifecycle?.gated === true ? lifecycle : null,
    async follow(activeVersion) {
      const status = running.status();
      // A running step commits and serves its own version; the next check sees the outcome.
      if (status.training) return;
      if (status.evaluating !== null) {
        // While the gate or canary evaluates a committed version, training is ahead of the active version
        // on purpose; a version neither the incumbent nor the candidate is a person's activation on a
        // gateway (distributed), which ends the evaluation as it would on this process.
        const incumbent = lifecycle?.incumbent() ?? null;
        if (incumbent !== null && activeVersion !== incumbent && activeVersion !== status.evaluating) await running.activate(activeVersion);
        return;
      }
      if (status.trainingVersion !== activeVersion) {
        // An activation elsewhere (a rollback on another gateway): training continues from it.
        await running.activate(activeVersion);
        return;
      }
      await followServing(activeVersion);
    },
    async close() {
      await running.close();
      await runningEngine.close();
    },
  };
}
