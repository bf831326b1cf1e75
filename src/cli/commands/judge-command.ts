/**
 * `clawrl judge`: the judge worker alone, for distributed mode. Any number run side by side:
 * each claims queued turns under a lease in its own name, so no turn is judged twice and a dead
 * worker's turns come back when its leases end. It needs an inference engine only to judge with
 * the policy (`--judge policy`) or to score OPD teachers (`--method opd|combine`); that engine
 * follows the active policy version like a gateway's. Built samples are announced
 * (`turn-scored`, `sample-available`).
 */
import { hostname } from 'node:os';
import type { z } from 'zod';
import { commandSchemas } from '../configuration/configuration-schema.js';
import type { Resolved } from '../configuration/configuration.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import type { PolicyServingStatus } from '../../spec/policy-serving-status.js';
import { createPolicyServing, type PolicyServing } from '../../serving/policy-serving.js';
import { createInferenceEngine } from '../wiring/create-inference-engine.js';
import { createJudgeEngine } from '../wiring/create-judge-engine.js';
import { createShutdownStack } from '../wiring/create-shutdown-stack.js';
import { consumerNameOf, openEventBus } from '../wiring/open-event-bus.js';
import { openRecordStore } from '../wiring/open-record-store.js';
import { runUntilSignal } from './run-until-signal.js';
import { judgeNeedsEngine, startJudgeService } from '../wiring/start-judge-service.js';
import { startPolicyFollower } from '../../serving/start-policy-follower.js';
import { startFollowerServing } from '../wiring/start-training.js';

/** The storage, bus, engine, judge and learning components and the recipe: `commandSchemas.judge`. */
export type JudgeCommandConfiguration = Resolved<z.infer<typeof commandSchemas.judge>>;

export interface RunningJudgeProcess {
  /** What the judge's own engine serves; null when it has none that loads policy versions. */
  servingStatus(): PolicyServingStatus | null;
  close(): Promise<void>;
}

export async function startJudgeProcess(configuration: JudgeCommandConfiguration, logger: Logger): Promise<RunningJudgeProcess> {
  const parts = createShutdownStack(logger);
  try {
    const bus = parts.add(await openEventBus(configuration, logger, 'clawrl-judge'), (opened) => opened.close());
    const store = parts.add(await openRecordStore(configuration, { events: { bus, logger } }), (opened) => opened.close());
    let engine: InferenceEngine | undefined;
    let policyServing: PolicyServing | undefined;
    if (judgeNeedsEngine(configuration)) {
      const created = parts.add(await createInferenceEngine(configuration, { logger, policies: store }), (opened) => opened.close());
      engine = created;
      if (created.capabilities.policyLoading) {
        const now = () => Date.now();
        policyServing = parts.add(createPolicyServing({ store, engine: created, logger, now, role: 'judge' }), async (opened) => opened.close());
        const serving = await startFollowerServing({ store, serving: policyServing, bus, logger, now });
        const consumer = consumerNameOf('judge', configuration.instance, hostname());
        parts.add(startPolicyFollower({ store, bus, consumer, follow: serving.follow, logger }), (started) => started.close());
      }
    }
    const judgeEngine = await createJudgeEngine(configuration, { logger });
    if (judgeEngine !== undefined) parts.add(judgeEngine, (created) => created.close());
    parts.add(startJudgeService(configuration, { store, engine, judgeEngine, logger }), (started) => started.close());
    logger.info('judge started', { judge: configuration.judge, method: configuration.method, engine: engine?.engineId ?? null });
    const judgeServing = policyServing;
    return { servingStatus: () => judgeServing?.status() ?? null, close: () => parts.close() };
  } catch (error) {
    await parts.close();
    throw error;
  }
}

export async function runJudgeCommand(configuration: JudgeCommandConfiguration, logger: Logger): Promise<void> {
  const running = await startJudgeProcess(configuration, logger);
  runUntilSignal(running, 'clawrl ready judge', logger);
}
