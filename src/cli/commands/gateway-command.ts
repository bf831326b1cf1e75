/**
 * `clawrl gateway`: the HTTP gateway alone, for distributed mode (`--store postgres --bus nats`).
 * Any number run behind a load balancer: sessions, turns and policy versions live in the store,
 * so consecutive requests of one session may land on different gateways. Each gateway serves the
 * store's active version at start and follows `policy-published` on its own durable consumer,
 * and routes a running canary's cohort to its candidate as the store says (`createCanaryFollower`;
 * the trainer runs the gate and the canary watch). It records turns and announces them
 * (`turn-recorded`); judging and training run elsewhere.
 */
import { hostname } from 'node:os';
import type { z } from 'zod';
import { commandSchemas } from '../configuration/configuration-schema.js';
import type { Resolved } from '../configuration/configuration.js';
import type { Logger } from '../../spec/logger.js';
import { createPolicyServing } from '../../serving/policy-serving.js';
import { createInferenceEngine, localModelDirectoryOf } from '../wiring/create-inference-engine.js';
import { checkEngineConfiguration } from '../configuration/check-engine-configuration.js';
import { createShutdownStack } from '../wiring/create-shutdown-stack.js';
import { consumerNameOf, eventForgetterOf, openEventBus } from '../wiring/open-event-bus.js';
import { openRecordStore } from '../wiring/open-record-store.js';
import { runUntilSignal } from './run-until-signal.js';
import { listenHostOf, startGatewayService } from '../wiring/start-gateway-service.js';
import { checkPortFree } from '../wiring/check-port-free.js';
import { startPolicyFollower } from '../../serving/start-policy-follower.js';
import { createCanaryFollower } from '../../serving/create-canary-follower.js';
import { startFollowerServing } from '../wiring/start-training.js';
import { createUserPolicyDirectory } from '../../serving/create-user-policy-directory.js';
import { checkPolicyScope } from '../configuration/check-policy-scope.js';
import { checkUpstreamToolCalling } from '../wiring/check-upstream-tool-calling.js';

/** The storage, bus, engine and gateway components: `commandSchemas.gateway`. */
export type GatewayCommandConfiguration = Resolved<z.infer<typeof commandSchemas.gateway>>;

export async function startGatewayProcess(configuration: GatewayCommandConfiguration, logger: Logger): Promise<{ url: string; close(): Promise<void> }> {
  checkEngineConfiguration(configuration);
  checkPolicyScope(configuration);
  if (configuration.engine === 'local') localModelDirectoryOf(configuration.model);
  // A busy port fails before the store and the engine are opened.
  await checkPortFree(listenHostOf(configuration), configuration.port);
  await checkUpstreamToolCalling(configuration, logger);
  const parts = createShutdownStack(logger);
  try {
    const bus = parts.add(await openEventBus(configuration, logger, 'clawrl-gateway'), (opened) => opened.close());
    const store = parts.add(await openRecordStore(configuration, { recordsTurns: true, events: { bus, logger } }), (opened) => opened.close());
    const engine = parts.add(await createInferenceEngine(configuration, { logger, policies: store }), (created) => created.close());
    const now = () => Date.now();
    const policyServing = parts.add(createPolicyServing({ store, engine, logger, now }), async (created) => created.close());
    // Per user, the trainer's commits and other gateways' activations reach this one as the directory's snapshot ages.
    const userPolicies = configuration.policyScope === 'user' ? createUserPolicyDirectory({ store, now }) : undefined;
    const serving = await startFollowerServing({ store, serving: policyServing, bus, logger, now, ...(userPolicies === undefined ? {} : { onUserLineageChange: () => userPolicies.refresh() }) });
    const canary = engine.capabilities.policyLoading ? createCanaryFollower({ store, engine, logger }) : null;
    await canary?.synchronize().catch((error: unknown) => logger.error('cannot serve the running canary yet; retrying', { error: String(error) }));
    const gateway = parts.add(
      await startGatewayService(configuration, {
        store,
        engine,
        policies: serving.policies,
        logger,
        ...eventForgetterOf(configuration),
        ...(userPolicies === undefined ? {} : { userPolicies }),
        ...(canary === null ? {} : { policyRouting: canary }),
      }),
      (started) => started.close(),
    );
    const consumer = consumerNameOf('gateway', configuration.instance, `${hostname()}-${gateway.port}`);
    if (canary !== null) {
      const follow = async (activeVersion: number) => {
        await serving.follow(activeVersion);
        await canary.synchronize();
      };
      parts.add(startPolicyFollower({ store, bus, consumer, follow, logger }), (started) => started.close());
    } else {
      const hint = engine.engineId === 'vllm' || engine.engineId === 'sglang' ? ' (trained versions need --adapter-dir <dir>, a folder the server reads too)' : '';
      logger.warn(`the ${engine.engineId} engine cannot load policy versions: this gateway serves the base model only${hint}`);
    }
    logger.info('gateway started', { consumer, store: configuration.store, bus: configuration.bus });
    return { url: gateway.url, close: () => parts.close() };
  } catch (error) {
    await parts.close();
    throw error;
  }
}

export async function runGatewayCommand(configuration: GatewayCommandConfiguration, logger: Logger): Promise<void> {
  const running = await startGatewayProcess(configuration, logger);
  runUntilSignal(running, `clawrl ready ${running.url}`, logger);
}
