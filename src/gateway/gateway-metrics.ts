/**
 * Prometheus metrics of the gateway, in a registry of its own (never prom-client's global one, so
 * several servers in one process, as in tests, do not collide).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface GatewayMetrics {
  readonly registry: Registry;
  requests: Counter<'route' | 'status'>;
  requestDuration: Histogram<'route' | 'stream'>;
  timeToFirstToken: Histogram<'stream'>;
  tokens: Counter<'kind'>;
  turns: Counter<'type' | 'status'>;
  inFlight: Gauge<'route'>;
  /** Set at scrape time from the record store. */
  queueDepth: Gauge<'queue'>;
}

const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createGatewayMetrics(options: { collectProcessMetrics: boolean }): GatewayMetrics {
  const registry = new Registry();
  if (options.collectProcessMetrics) collectDefaultMetrics({ register: registry, prefix: 'clawrl_' });
  return {
    registry,
    requests: new Counter({
      name: 'clawrl_http_requests_total',
      help: 'HTTP requests by route and status code',
      labelNames: ['route', 'status'],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'clawrl_request_duration_seconds',
      help: 'Time from request arrival to the last byte of the response',
      labelNames: ['route', 'stream'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    timeToFirstToken: new Histogram({
      name: 'clawrl_time_to_first_token_seconds',
      help: 'Time from request arrival to the first generated content sent',
      labelNames: ['stream'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'clawrl_tokens_total',
      help: 'Prompt and completion tokens served',
      labelNames: ['kind'],
      registers: [registry],
    }),
    turns: new Counter({
      name: 'clawrl_turns_recorded_total',
      help: 'Turns written to the record store',
      labelNames: ['type', 'status'],
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'clawrl_in_flight_requests',
      help: 'Requests being served now',
      labelNames: ['route'],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'clawrl_queue_depth',
      help: 'Work waiting in the record store: turns awaiting their next state, linked turns awaiting judgement',
      labelNames: ['queue'],
      registers: [registry],
    }),
  };
}
