/**
 * Opens the event bus named by `--bus`: in memory (one process, the default) or NATS JetStream at
 * `--bus-url`, with the stream and subjects named by `--bus-prefix` so that several deployments
 * (staging, production, test runs) share one NATS server without seeing each other's events.
 */
import { createMemoryEventBus } from '../../buses/memory/create-memory-event-bus.js';
import { createNatsEventBus } from '../../buses/nats/create-nats-event-bus.js';
import { eraseNatsEvents, type ErasedEventIds } from '../../buses/nats/erase-nats-events.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { EventBus } from '../../spec/event-bus.js';
import type { Logger } from '../../spec/logger.js';

export interface BusConfiguration {
  bus: 'memory' | 'nats';
  busUrl: string | undefined;
  busPrefix: string;
}

export async function openEventBus(configuration: BusConfiguration, logger: Logger, connectionName: string): Promise<EventBus> {
  if (configuration.bus === 'memory') return createMemoryEventBus({ logger });
  return createNatsEventBus({
    servers: natsServersOf(configuration),
    streamName: configuration.busPrefix,
    subjectPrefix: configuration.busPrefix,
    logger,
    connectionName,
  });
}

/**
 * What erases the bus's retained events of erased records: for NATS, JetStream's erase of each event
 * naming an erased id; the memory bus keeps nothing past the process, so none.
 */
export function eventForgetterOf(configuration: BusConfiguration): { forgetEvents?: (ids: ErasedEventIds) => Promise<number> } {
  if (configuration.bus === 'memory') return {};
  const servers = natsServersOf(configuration);
  return { forgetEvents: (ids) => eraseNatsEvents({ servers, streamName: configuration.busPrefix }, ids) };
}

/** `--bus-url`, split into the servers of a cluster. */
export function natsServersOf(configuration: BusConfiguration): string[] {
  if (configuration.busUrl === undefined || configuration.busUrl === '') {
    throw new ClawrlError('configuration_error', '--bus nats needs --bus-url nats://host:4222 (or CLAWRL_BUS_URL).', { param: 'busUrl' });
  }
  return configuration.busUrl.split(',').map((server) => server.trim()).filter((server) => server.length > 0);
}

/**
 * The durable consumer name of one process: `<role>-<instance>`, where the instance is
 * `--instance` or else derived from the host (and port), so a restarted process resumes its own
 * consumer instead of leaving a new one behind on the server at every start.
 */
export function consumerNameOf(role: string, instance: string | undefined, fallback: string): string {
  const name = `${role}-${instance ?? fallback}`.replaceAll(/[^A-Za-z0-9_-]/g, '-');
  return name.slice(0, 64);
}
