/**
 * `clawrl serve`: the composition root of the one-process mode. Builds the record store, the
 * engine and the gateway, starts them in order and stops them in reverse order on SIGINT/SIGTERM:
 * stop accepting, drain in-flight requests, close the engine, flush and close the store.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createApiKeyAuthenticator, parseApiKeyEntry } from '../gateway/api-key-authenticator.js';
import { createGatewayApp } from '../gateway/create-gateway-app.js';
import { createGatewayMetrics } from '../gateway/gateway-metrics.js';
import { createSessionReaper } from '../gateway/session-reaper.js';
import { createJudgeWorker } from '../judge/create-judge-worker.js';
import type { Logger } from '../spec/logger.js';
import { createInferenceEngine, servedModelNameOf, type EngineConfiguration } from './create-inference-engine.js';
import { createJudge, type JudgeConfiguration } from './create-judge.js';
import { openRecordStore, type StoreConfiguration } from './open-record-store.js';
import { startTraining, type RunningTraining, type TrainingConfiguration } from './start-training.js';

export interface ServeConfiguration extends EngineConfiguration, JudgeConfiguration, StoreConfiguration, TrainingConfiguration {
  pinSessions: boolean;
  host: string;
  port: number;
  method: 'rl' | 'opd' | 'combine';
  apiKey: string[];
  adminKey: string | undefined;
  bodyLimit: number;
  concurrencyPerKey: number;
  maxTokens: number;
  sessionIdleTimeout: number;
}

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '::1']);

/** Sortable, unique, readable ids: prefix, time, randomness. */
export function createId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${randomBytes(8).toString('hex')}`;
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export async function startServer(configuration: ServeConfiguration, logger: Logger): Promise<RunningServer> {
  const authenticator = createApiKeyAuthenticator({
    apiKeys: configuration.apiKey.map(parseApiKeyEntry),
    ...(configuration.adminKey === undefined ? {} : { adminKey: configuration.adminKey }),
  });
  let host = configuration.host;
  if (authenticator.open && !loopbackHosts.has(host)) {
    logger.warn(`no API key configured: binding 127.0.0.1 instead of ${host}; pass --api-key to serve other machines`);
    host = '127.0.0.1';
  }
  const store = await openRecordStore(configuration);
  let engine;
  let judge;
  let training: RunningTraining;
  try {
    engine = await createInferenceEngine(configuration);
    judge = createJudge(configuration, engine);
    // Before listening: the first request is served on the active policy version.
    training = await startTraining(configuration, { store, engine, logger, now: () => Date.now() });
  } catch (error) {
    await engine?.close();
    await store.close();
    throw error;
  }
  const context = {
    engine,
    store,
    authenticator,
    metrics: createGatewayMetrics({ collectProcessMetrics: true }),
    logger,
    limits: {
      bodyLimitBytes: configuration.bodyLimit,
      concurrencyPerKey: configuration.concurrencyPerKey,
      defaultMaxTokens: configuration.maxTokens,
    },
    modelAliases: [servedModelNameOf(configuration), configuration.model].filter((name, index, all) => name !== engine.modelId && all.indexOf(name) === index),
    now: () => Date.now(),
    createId,
    policies: training.policies,
    pinSessions: configuration.pinSessions,
  };
  const app = createGatewayApp(context);
  const reaper = createSessionReaper({
    store,
    idleTimeoutMs: configuration.sessionIdleTimeout * 1000,
    intervalMs: Math.min(60_000, configuration.sessionIdleTimeout * 250),
    now: context.now,
    logger,
  });

  const judgeWorker = createJudgeWorker({
    store,
    engine,
    logger,
    judge,
    method: configuration.method,
    now: context.now,
    createId,
    workerId: createId('judge'),
  });

  const server: ServerType = await new Promise((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: host, port: configuration.port }, () => resolve(started));
    started.once('error', reject);
  });
  reaper.start();
  judgeWorker.start();
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  logger.info(`clawrl listening on ${url}/v1`, { model: engine.modelId, engine: engine.engineId, store: configuration.store });
  if (authenticator.open) logger.warn('no API key configured: the server accepts requests from this machine only (loopback)');

  let closing: Promise<void> | undefined;
  return {
    url,
    close() {
      closing ??= (async () => {
        // Stop accepting; idle keep-alive connections go now, busy ones when their response ends.
        const drained = new Promise<void>((resolve) => server.close(() => resolve()));
        if ('closeIdleConnections' in server) server.closeIdleConnections();
        const drainTimeout = new Promise<void>((resolve) => setTimeout(resolve, 30_000).unref());
        await Promise.race([drained, drainTimeout]);
        await reaper.close();
        // In-flight judgements are aborted; their turns stay queued for the next start.
        await judgeWorker.close();
        // A running step finishes (or fails and leaves its samples ready) before the engines go.
        await training.close();
        await engine.close();
        await store.close();
      })();
      return closing;
    },
  };
}

export async function runServeCommand(configuration: ServeConfiguration, logger: Logger): Promise<void> {
  const running = await startServer(configuration, logger);
  // The exact line end-to-end tests and scripts wait for.
  process.stdout.write(`clawrl ready ${running.url}\n`);
  const shutdown = (signal: string) => {
    logger.info(`${signal} received: draining in-flight requests and closing`);
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}
