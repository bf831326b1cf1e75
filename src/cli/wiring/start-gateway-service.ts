/**
 * The HTTP gateway of `clawrl serve` and `clawrl gateway`: authentication, the gateway app, the
 * idle-session reaper and the listening server. Closing stops accepting, drains in-flight
 * requests (each records its turn before its response ends) and stops the reaper; the engine and
 * the store belong to the caller.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadDashboardAssets } from '../../dashboard/load-dashboard-assets.js';
import { createExperimentChartsReader } from '../../lab/create-experiment-charts-reader.js';
import { createApiKeyAuthenticator, parseApiKeyEntry } from '../../gateway/api-key-authenticator.js';
import { createGatewayRequestListener } from '../../gateway/create-gateway-request-listener.js';
import type { DashboardAssets, PolicyRouting, UserPolicyRouting } from '../../gateway/gateway-context.js';
import { createGatewayMetrics } from '../../gateway/gateway-metrics.js';
import type { PolicyControl } from '../../gateway/policy-control.js';
import { parseKeyConsent, type ConsentDefaults } from '../../gateway/request-controls.js';
import { createSessionReaper } from '../../gateway/session-reaper.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { createDataEraser, type ErasedIds } from '../../gateway/data-eraser.js';
import { createRetentionSchedule } from '../../gateway/retention-schedule.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { z } from 'zod';
import { configurationSections } from '../configuration/configuration-schema.js';
import type { Resolved } from '../configuration/configuration.js';
import { servedModelNamesOf, type EngineConfiguration } from './create-inference-engine.js';
import { createLazyChatRenderer, createTokenDecoder } from './create-token-decoder.js';
import { createTurnRedaction } from './create-turn-redaction.js';
import { createRedactingTurnLog } from '../../gateway/redacting-turn-log.js';
import { describeListenError } from './describe-listen-error.js';
import { resolveSamplingDefaults } from '../configuration/sampling-defaults.js';

/** The gateway component of the configuration schema, and the model's names. */
export type GatewayConfiguration = Resolved<z.infer<typeof configurationSections.gateway>> & Pick<EngineConfiguration, 'model' | 'servedModelName'>;

export interface GatewayServiceDependencies {
  store: RecordStore;
  engine: InferenceEngine;
  policies: PolicyControl;
  logger: Logger;
  /** Erases the bus's retained events of erased records (`--bus nats`); absent, the bus keeps none durably. */
  forgetEvents?: (ids: ErasedIds) => Promise<number>;
  /** Which version a session gets while a canary runs (`clawrl serve` with `--canary-share`). */
  policyRouting?: PolicyRouting;
  /** Each user's own version (`--policy-scope user`). */
  userPolicies?: UserPolicyRouting;
}

// Retention erases what aged past its cut this often; a day's cut moves by an hour between runs.
const retentionIntervalMs = 60 * 60 * 1000;

export interface RunningGateway {
  url: string;
  port: number;
  close(): Promise<void>;
}

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '::1']);

/** Sortable, unique, readable ids: prefix, time, randomness (8 random bytes, 16 hex digits). */
export function createId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${randomBytes(8).toString('hex')}`;
}

function dashboardAssetsOf(logger: Logger): { dashboardAssets?: DashboardAssets } {
  const assets = loadDashboardAssets();
  if (assets === null) logger.warn('the dashboard is not built (npm run build): GET / answers 404');
  return assets === null ? {} : { dashboardAssets: assets };
}

/**
 * The host the gateway listens on: `--host`, except that a server without any key (`--api-key`,
 * `--admin-key`) stays on loopback.
 */
export function listenHostOf(configuration: Pick<GatewayConfiguration, 'host' | 'apiKey' | 'adminKey'>): string {
  const open = configuration.apiKey.length === 0 && configuration.adminKey === undefined;
  return open && !loopbackHosts.has(configuration.host) ? '127.0.0.1' : configuration.host;
}

/**
 * Each tenant's consent defaults (`--key-consent`). A tenant no key names is refused: a misspelt
 * name would otherwise leave that key's requests recorded and trained on without a word.
 */
export function consentDefaultsOf(configuration: Pick<GatewayConfiguration, 'apiKey' | 'keyConsent'>): Map<string, ConsentDefaults> {
  const consent = parseKeyConsent(configuration.keyConsent);
  const tenants = new Set(['admin', ...configuration.apiKey.map((value) => parseApiKeyEntry(value).tenant)]);
  for (const tenant of consent.keys()) {
    if (!tenants.has(tenant)) {
      throw new ClawrlError('configuration_error', `--key-consent names the tenant '${tenant}', which no --api-key names ("tenant=key"; a bare key's tenant is key-<digest>, as the start-up log says).`);
    }
  }
  return consent;
}

export async function startGatewayService(configuration: GatewayConfiguration, dependencies: GatewayServiceDependencies): Promise<RunningGateway> {
  const { store, engine, logger } = dependencies;
  const authenticator = createApiKeyAuthenticator({
    apiKeys: configuration.apiKey.map(parseApiKeyEntry),
    ...(configuration.adminKey === undefined ? {} : { adminKey: configuration.adminKey }),
    ...(configuration.trustedUserHeader === undefined ? {} : { trustedUserHeader: configuration.trustedUserHeader }),
  });
  const consentDefaults = consentDefaultsOf(configuration);
  const host = listenHostOf(configuration);
  if (host !== configuration.host) {
    logger.warn(`no API key configured: binding 127.0.0.1 instead of ${configuration.host}; pass --api-key to serve other machines`);
  }
  if (configuration.userMemory === 'teacher' && !engine.capabilities.scoring) {
    // Only an OPD teacher reads the memory in this mode, and an engine that cannot score has none.
    logger.warn(`--user-memory teacher: the ${engine.engineId} engine cannot score, so no OPD teacher reads users' memory; it is kept, not used (--user-memory context adds it to requests)`);
  }
  const sampling = await resolveSamplingDefaults({ ...configuration, temperatureScoring: engine.capabilities.temperatureScoring });
  const now = () => Date.now();
  const eraser = createDataEraser({
    store,
    onDelete: configuration.onDelete,
    policies: dependencies.policies,
    ...(dependencies.forgetEvents === undefined ? {} : { forgetEvents: dependencies.forgetEvents }),
    now,
    logger,
  });
  const renderer = createLazyChatRenderer(configuration.model, logger);
  const redaction = createTurnRedaction(configuration.redact, { renderer, engine }, logger);
  const context = {
    engine,
    eraser,
    // Everything the gateway keeps goes through the redactor first (--redact); erasure reads and deletes the store itself.
    store: redaction === null ? store : createRedactingTurnLog(store, redaction),
    authenticator,
    metrics: createGatewayMetrics({ collectProcessMetrics: true }),
    logger,
    limits: {
      bodyLimitBytes: configuration.bodyLimit,
      concurrencyPerKey: configuration.concurrencyPerKey,
    },
    samplingDefaults: sampling.defaults,
    // Requests must name one of the served names; the engine's own name is the first.
    modelAliases: servedModelNamesOf(configuration).filter((name) => name !== engine.modelId),
    now,
    createId,
    policies: dependencies.policies,
    pinSessions: configuration.pinSessions,
    consentDefaults,
    userMemory: { mode: configuration.userMemory, maximumEntries: configuration.userMemoryEntries, maximumTokens: configuration.userMemoryTokens },
    ...(dependencies.policyRouting === undefined ? {} : { policyRouting: dependencies.policyRouting }),
    ...(dependencies.userPolicies === undefined ? {} : { userPolicies: dependencies.userPolicies }),
    decodeTokens: createTokenDecoder(renderer),
    ...(configuration.resultsDir === undefined ? {} : { experiments: createExperimentChartsReader(configuration.resultsDir) }),
    ...dashboardAssetsOf(logger),
  };
  const reaper = createSessionReaper({
    store,
    idleTimeoutMs: configuration.sessionIdleTimeout * 1000,
    intervalMs: Math.min(60_000, configuration.sessionIdleTimeout * 250),
    now: context.now,
    logger,
  });
  const server: Server = createServer(createGatewayRequestListener(context));
  await new Promise<void>((resolve, reject) => {
    const refuse = (error: Error) => reject(describeListenError(error, host, configuration.port));
    server.once('error', refuse);
    server.listen(configuration.port, host, () => {
      server.off('error', refuse);
      resolve();
    });
  });
  reaper.start();
  const retention =
    configuration.retainDays === undefined ? null : createRetentionSchedule({ eraser, retainDays: configuration.retainDays, intervalMs: retentionIntervalMs, now, logger });
  retention?.start();
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  logger.info(`clawrl listening on ${url}/v1`, { model: engine.modelId, engine: engine.engineId });
  logger.info('requests that name no sampling parameters are sampled with', { ...sampling.defaults, from: sampling.sources });
  if (authenticator.open) logger.warn('no API key configured: the server accepts requests from this machine only (loopback)');

  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    close() {
      closing ??= (async () => {
        // Stop accepting; idle keep-alive connections go now, busy ones when their response ends.
        const drained = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const drainTimeout = new Promise<void>((resolve) => setTimeout(resolve, 30_000).unref());
        await Promise.race([drained, drainTimeout]);
        await reaper.close();
        await retention?.close();
        // After the drain: the requests in flight recorded their turns through it.
        await redaction?.redactor.close();
      })();
      return closing;
    },
  };
}
