/**
 * `clawrl gateway`: the HTTP gateway alone, for distributed mode (`--store postgres --bus nats`).
 * Any number run behind a load balancer: sessions, turns and policy versions live in the store,
 * so consecutive requests of one session may land on different gateways. Each gateway serves the
 * store's active version at start and follows `policy-published` on its own durable consumer.
 * It records turns and announces them (`turn-recorded`); judging and training run elsewhere.
 */
import { hostname } from 'node:os';
import type { z } from 'zod';
import { commandSchemas } from './configuration-schema.js';
import type { Resolved } from './configuration.js';
import type { Logger } from '../spec/logger.js';
import { createPolicyServing } from '../trainer/policy-serving.js';
import { createEventPublishingStore } from './create-event-publishing-store.js';
import { createInferenceEngine, localModelDirectoryOf } from './create-inference-engine.js';
import { checkEngineConfiguration } from './check-engine-configuration.js';
import { createShutdownStack } from './create-shutdown-stack.js';
import { consumerNameOf, openEventBus } from './open-event-bus.js';
import { openRecordStore } from './open-record-store.js';
import { runUntilSignal } from './run-until-signal.js';
import { listenHostOf, startGatewayService } from './start-gateway-service.js';
import { checkPortFree } from './check-port-free.js';
import { startPolicyFollower } from './start-policy-follower.js';
import { startFollowerServing } from './start-training.js';

/** The storage, bus, engine and gateway components: `commandSchemas.gateway`. */
export type GatewayCommandConfiguration = Resolved<z.infer<typeof commandSchemas.gateway>>;

export async function startGatewayProcess(configuration: GatewayCommandConfiguration, logger: Logger): Promise<{ url: string; close(): Promise<void> }> {
  checkEngineConfiguration(configuration);
  if (configuration.engine === 'local') localModelDirectoryOf(configuration.model);
  // A busy port fails before the store and the engine are opened.
  await checkPortFree(listenHostOf(configuration), configuration.port);
  const parts = createShutdownStack(logger);
  try {
    const store = parts.add(await openRecordStore(configuration, { recordsTurns: true }), (opened) => opened.close());
    const bus = parts.add(await openEventBus(configuration, logger, 'clawrl-gateway'), (opened) => opened.close());
    const engine = parts.add(await createInferenceEngine(configuration), (created) => created.close());
    const now = () => Date.now();
    const policyServing = parts.add(createPolicyServing({ store, engine, logger, now }), async (created) => created.close());
    const serving = await startFollowerServing({ store, serving: policyServing, bus, logger, now });
    const gateway = parts.add(
      await startGatewayService(configuration, { store: createEventPublishingStore(store, bus, logger), engine, policies: serving.policies, logger }),
      (started) => started.close(),
    );
    const consumer = consumerNameOf('gateway', configuration.instance, `${hostname()}-${gateway.port}`);
    if (engine.capabilities.policyLoading) {
      parts.add(startPolicyFollower({ store, bus, consumer, follow: serving.follow, logger }), (started) => started.close());
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
