/**
 * `clawrl trainer`: the trainer alone, for distributed mode. It claims ready samples under a
 * lease in the name of `--instance` (default `trainer`; stable, so a restarted trainer releases
 * its own leases at once), trains on the local model folder (`--model`), keeps its checkpoints
 * under `--data`, and commits each step with its policy artifact to the store, where every
 * process reaches it; `policy-published` tells the gateways and judges to load it. It follows
 * activations made on any gateway (a rollback), so training always continues from what is served.
 * Run one per policy.
 *
 * It also runs the version lifecycle (`--gate`, `--canary-share`; docs/training.md): a committed
 * version waits as a candidate; the replay gate samples it and the incumbent on an inference
 * engine of the trainer's own (`--engine` and its options, as the gateways have them: the local
 * engine on the model folder, or the vLLM/SGLang server where the candidate is loaded under a name
 * no user is routed to) and judges them with `--judge`; the canary watch reads the judgements and
 * feedback the gateways and judges stored. The gateways follow the store: the canary's cohort and
 * the active version (`createCanaryFollower`).
 */
import type { z } from 'zod';
import { commandSchemas } from '../configuration/configuration-schema.js';
import type { Resolved } from '../configuration/configuration.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { Logger } from '../../spec/logger.js';
import { claimDataFolder } from '../wiring/claim-data-folder.js';
import { createInferenceEngine, localModelDirectoryOf } from '../wiring/create-inference-engine.js';
import { createShutdownStack } from '../wiring/create-shutdown-stack.js';
import { createStorePolicyServing } from '../../serving/create-store-policy-serving.js';
import { consumerNameOf, openEventBus } from '../wiring/open-event-bus.js';
import { openRecordStore } from '../wiring/open-record-store.js';
import { runUntilSignal } from './run-until-signal.js';
import { startPolicyFollower } from '../../serving/start-policy-follower.js';
import { startTraining } from '../wiring/start-training.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import { checkEngineConfiguration } from '../configuration/check-engine-configuration.js';
import { checkPolicyScope } from '../configuration/check-policy-scope.js';
import { versionLifecycleFactory } from '../wiring/create-version-lifecycle.js';
import { announcePolicyVersion } from '../../serving/create-publishing-policy-serving.js';

/** The storage, bus, engine (the gate's), judge, trainer and versions components and the recipe: `commandSchemas.trainer`. */
export type TrainerCommandConfiguration = Resolved<z.infer<typeof commandSchemas.trainer>>;

export async function startTrainerProcess(configuration: TrainerCommandConfiguration, logger: Logger): Promise<{ close(): Promise<void> }> {
  checkPolicyScope(configuration);
  try {
    if (configuration.trainer === 'local') localModelDirectoryOf(configuration.model);
  } catch (error) {
    throw new ClawrlError('configuration_error', `clawrl trainer trains the model's weights in a local folder (--model): ${(error as Error).message}`, {
      param: 'model',
      cause: error,
    });
  }
  const parts = createShutdownStack(logger);
  const now = () => Date.now();
  try {
    // Its checkpoints live under --data: two trainers on one folder would write over each other's.
    parts.add(claimDataFolder(configuration.data, 'clawrl trainer'), async (lock) => lock.release());
    const store = parts.add(await openRecordStore(configuration), (opened) => opened.close());
    const bus = parts.add(await openEventBus(configuration, logger, 'clawrl-trainer'), (opened) => opened.close());
    const workerId = configuration.instance ?? 'trainer';
    const gated = configuration.gate !== 'none' || configuration.canaryShare > 0;
    let gateEngine: InferenceEngine | null = null;
    if (configuration.gate === 'replay') {
      checkEngineConfiguration(configuration);
      gateEngine = parts.add(await createInferenceEngine(configuration, { logger, policies: store }), (created) => created.close());
    }
    const announce = (version: number) => announcePolicyVersion(bus, logger, version);
    const training = parts.add(
      await startTraining(
        { ...configuration, noTrain: false },
        {
          store,
          serving: createStorePolicyServing({ store, logger, now }),
          bus,
          logger,
          now,
          workerId,
          ...(gated ? { createLifecycle: versionLifecycleFactory(configuration, { store, engine: gateEngine, logger, now, announce }) } : {}),
        },
      ),
      (started) => started.close(),
    );
    parts.add(
      startPolicyFollower({ store, bus, consumer: consumerNameOf('trainer', workerId, workerId), follow: training.follow, logger }),
      (started) => started.close(),
    );
    return { close: () => parts.close() };
  } catch (error) {
    await parts.close();
    throw error;
  }
}

export async function runTrainerCommand(configuration: TrainerCommandConfiguration, logger: Logger): Promise<void> {
  const running = await startTrainerProcess(configuration, logger);
  runUntilSignal(running, 'clawrl ready trainer', logger);
}
