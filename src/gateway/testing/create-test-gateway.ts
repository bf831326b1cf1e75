/**
 * A gateway over an in-memory SQLite store and a scripted engine. The protocol routes go through the
 * real `node:http` listener on a loopback port (started on first use, closed after the test file);
 * the other routes can be called without sockets through `app.request`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { createSqliteRecordStore } from '../../stores/sqlite/create-sqlite-record-store.js';
import { silentLogger } from '../../spec/logger.js';
import type { RecordStore } from '../../spec/record-store.js';
import { createApiKeyAuthenticator, type ApiKeyEntry } from '../api-key-authenticator.js';
import { createGatewayApp } from '../create-gateway-app.js';
import { createGatewayRequestListener } from '../create-gateway-request-listener.js';
import type { GatewayContext, GatewayLimits, SamplingDefaults } from '../gateway-context.js';
import { createGatewayMetrics } from '../gateway-metrics.js';
import { createScriptedInferenceEngine, type ScriptedInferenceEngine } from './scripted-inference-engine.js';

export interface TestGateway {
  app: ReturnType<typeof createGatewayApp>;
  engine: ScriptedInferenceEngine;
  store: RecordStore;
  context: GatewayContext;
  /** POSTs a chat completion body over HTTP (or, with `path`, any protocol route's body). */
  chat(body: unknown, headers?: Record<string, string>, path?: string): Promise<Response>;
  /** The listening server's base URL (starts it). */
  url(): Promise<string>;
}

const openServers = new Set<Server>();
afterAll(async () => {
  await Promise.all(
    [...openServers].map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
  openServers.clear();
});

export function createTestGateway(
  options: {
    engine?: ScriptedInferenceEngine;
    apiKeys?: ApiKeyEntry[];
    adminKey?: string;
    trustedUserHeader?: string;
    limits?: Partial<GatewayLimits>;
    samplingDefaults?: Partial<SamplingDefaults>;
    consentDefaults?: GatewayContext['consentDefaults'];
    userMemory?: GatewayContext['userMemory'];
  } = {},
): TestGateway {
  const engine = options.engine ?? createScriptedInferenceEngine({});
  const store = createSqliteRecordStore({ path: ':memory:' });
  let counter = 0;
  const context: GatewayContext = {
    engine,
    store,
    authenticator: createApiKeyAuthenticator({
      apiKeys: options.apiKeys ?? [],
      ...(options.adminKey === undefined ? {} : { adminKey: options.adminKey }),
      ...(options.trustedUserHeader === undefined ? {} : { trustedUserHeader: options.trustedUserHeader }),
    }),
    metrics: createGatewayMetrics({ collectProcessMetrics: false }),
    logger: silentLogger,
    limits: { bodyLimitBytes: 1024 * 1024, concurrencyPerKey: 8, ...options.limits },
    samplingDefaults: { maxTokens: 256, temperature: 1, topP: 1, ...options.samplingDefaults },
    modelAliases: [],
    now: () => 1_700_000_000_000 + counter * 1000,
    createId: (prefix) => `${prefix}_${(counter += 1)}`,
    ...(options.consentDefaults === undefined ? {} : { consentDefaults: options.consentDefaults }),
    ...(options.userMemory === undefined ? {} : { userMemory: options.userMemory }),
  };
  const app = createGatewayApp(context);
  let listening: Promise<string> | undefined;
  const url = () => {
    listening ??= new Promise((resolve) => {
      const server = createServer(createGatewayRequestListener(context, app));
      openServers.add(server);
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    });
    return listening;
  };
  return {
    app,
    engine,
    store,
    context,
    url,
    async chat(body, headers = {}, path = '/v1/chat/completions') {
      return fetch(`${await url()}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
  };
}

/** Reads an SSE body into its JSON events (without `[DONE]`) and whether `[DONE]` arrived. */
export async function readEvents(response: Response): Promise<{ events: Array<Record<string, unknown>>; done: boolean }> {
  const text = await response.text();
  const events: Array<Record<string, unknown>> = [];
  let done = false;
  for (const block of text.split('\n\n')) {
    const data = block.replace(/^data: /, '').trim();
    if (data === '') continue;
    if (data === '[DONE]') done = true;
    else events.push(JSON.parse(data) as Record<string, unknown>);
  }
  return { events, done };
}
