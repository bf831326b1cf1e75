/**
 * `clawrl serve`: every component in one process. Builds the record store, the event bus, the
 * engine, policy serving with the trainer, the judge worker and the gateway, starts them in that
 * order (the first request is served on the active policy version) and stops them in reverse
 * order on SIGINT/SIGTERM: stop accepting, drain in-flight requests, stop judging (turns in
 * flight stay queued), let a running step finish, close the engine and the bus, flush the store.
 * The judge runs in its own thread whenever it can (`start-judge-thread.ts`), off the HTTP loop.
 * `clawrl gateway`, `judge` and `trainer` start the same parts one per process.
 */
import { hostname } from 'node:os';
import type { z } from 'zod';
import { commandSchemas } from '../configuration/configuration-schema.js';
import type { Resolved } from '../configuration/configuration.js';
import type { Logger } from '../../spec/logger.js';
import type { PolicyServingStatus } from '../../spec/policy-serving-status.js';
import { createPolicyServing } from '../../serving/policy-serving.js';
import { claimDataFolder } from '../wiring/claim-data-folder.js';
import { checkPortFree } from '../wiring/check-port-free.js';
import { createInferenceEngine, localModelDirectoryOf } from '../wiring/create-inference-engine.js';
import { checkEngineConfiguration, checkTrainedVersionServing } from '../configuration/check-engine-configuration.js';
import { createShutdownStack } from '../wiring/create-shutdown-stack.js';
import { consumerNameOf, eventForgetterOf, openEventBus } from '../wiring/open-event-bus.js';
import { openRecordStore } from '../wiring/open-record-store.js';
import { runUntilSignal } from './run-until-signal.js';
import { listenHostOf, startGatewayService } from '../wiring/start-gateway-service.js';
import { startJudgeService } from '../wiring/start-judge-service.js';
import { createJudgeEngine } from '../wiring/create-judge-engine.js';
import { judgeRunsInThread, startJudgeThread } from '../wiring/start-judge-thread.js';
import { startPolicyFollower } from '../../serving/start-policy-follower.js';
import { startTraining } from '../wiring/start-training.js';
import { manualReplayOf, versionLifecycleFactory } from '../wiring/create-version-lifecycle.js';
import type { PolicyControl } from '../../gateway/policy-control.js';
import { checkUpstreamToolCalling } from '../wiring/check-upstream-tool-calling.js';
import { checkPolicyScope } from '../configuration/check-policy-scope.js';
import { createUserPolicyDirectory } from '../../serving/create-user-policy-directory.js';

/** Every component's options: `commandSchemas.serve`. */
export type ServeConfiguration = Resolved<z.infer<typeof commandSchemas.serve>>;

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export async function startServer(configuration: ServeConfiguration, logger: Logger): Promise<RunningServer> {
  // The cheap checks first, then the data folder's lock: a server that cannot run touches nothing.
  checkEngineConfiguration(configuration);
  checkTrainedVersionServing(configuration);
  checkPolicyScope(configuration);
  if (configuration.engine === 'local') localModelDirectoryOf(configuration.model);
  await checkPortFree(listenHostOf(configuration), configuration.port);
  await checkUpstreamToolCalling(configuration, logger);
  const parts = createShutdownStack(logger);
  const now = () => Date.now();
  try {
    // SQLite's file and the trainer's checkpoints live under --data; with neither, serve writes nothing there.
    if (configuration.store === 'sqlite' || !configuration.noTrain) parts.add(claimDataFolder(configuration.data, 'clawrl serve'), async (lock) => lock.release());
    const bus = parts.add(await openEventBus(configuration, logger, 'clawrl-serve'), (opened) => opened.close());
    const store = parts.add(await openRecordStore(configuration, { recordsTurns: true, events: { bus, logger } }), (opened) => opened.close());
    const engine = parts.add(await createInferenceEngine(configuration, { logger, policies: store }), (created) => created.close());
    const serving = parts.add(createPolicyServing({ store, engine, logger, now }), async (created) => created.close());
    const userPolicies = configuration.policyScope === 'user' ? createUserPolicyDirectory({ store, now }) : undefined;
    const training = parts.add(
      await startTraining(configuration, {
        store,
        serving,
        bus,
        engine,
        logger,
        now,
        // One trainer per store in one-process mode: a stable id lets a restart release its own leases.
        workerId: configuration.instance ?? 'trainer',
        ...(userPolicies === undefined ? {} : { onUserLineageChange: () => userPolicies.refresh() }),
        ...(configuration.gate === 'none' && configuration.canaryShare === 0 ? {} : { createLifecycle: versionLifecycleFactory(configuration, { store, engine, logger, now }) }),
      }),
      (started) => started.close(),
    );
    const judgeThread = judgeRunsInThread(configuration) ? await startJudgeThread(configuration, { logger }) : null;
    const judgeEngine = judgeThread === null ? await createJudgeEngine(configuration, { logger }) : undefined;
    if (judgeEngine !== undefined) parts.add(judgeEngine, (created) => created.close());
    const judge = judgeThread ?? startJudgeService(configuration, { store, engine, judgeEngine, logger });
    parts.add(judge, (started) => started.close());
    // The judge thread's own engine (a remote one) follows the versions too; the status shows both.
    const judgeServing = (): PolicyServingStatus[] => {
      const status = judgeThread?.servingStatus() ?? null;
      return status === null ? [] : [status];
    };
    const policies: PolicyControl = {
      activate: (version, reason) => training.policies.activate(version, reason),
      get training() {
        return training.policies.training;
      },
      servingStatus: () => [...(training.policies.servingStatus?.() ?? []), ...judgeServing()],
    };
    const replay = manualReplayOf(configuration, { store, engine, logger, now, serving });
    if (replay !== undefined) policies.replay = replay;
    const gateway = parts.add(
      await startGatewayService(configuration, {
        store, engine, policies, logger, ...eventForgetterOf(configuration),
        ...(training.lifecycle === null ? {} : { policyRouting: training.lifecycle }),
        ...(userPolicies === undefined ? {} : { userPolicies }),
      }),
      (started) => started.close(),
    );
    parts.add(
      startPolicyFollower({
        store,
        bus,
        consumer: consumerNameOf('serve', configuration.instance, `${hostname()}-${gateway.port}`),
        follow: training.follow,
        logger,
      }),
      (started) => started.close(),
    );
    logger.info('serving', { store: configuration.store, bus: configuration.bus });
    return { url: gateway.url, close: () => parts.close() };
  } catch (error) {
    await parts.close();
    throw error;
  }
}

export async function runServeCommand(configuration: ServeConfiguration, logger: Logger): Promise<void> {
  const running = await startServer(configuration, logger);
  // The exact line end-to-end tests and scripts wait for.
  runUntilSignal(running, `clawrl ready ${running.url}`, logger);
}
