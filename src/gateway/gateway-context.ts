/** What the gateway's routes share: seams, limits and the injected clock and id generator. */
import type { ExperimentCharts } from '../spec/experiment-charts.js';
import type { InferenceEngine, PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { TrainingQueue } from '../spec/training-queue.js';
import type { PolicyRegistry } from '../spec/policy-registry.js';
import type { RecordReads } from '../spec/record-reads.js';
import type { TurnLog } from '../spec/turn-log.js';
import type { UserMemory } from '../spec/user-memory.js';
import type { UserMemoryMode } from '../core/user-memory-context.js';
import type { ApiKeyAuthenticator } from './api-key-authenticator.js';
import type { DataEraser } from './data-eraser.js';
import type { GatewayMetrics } from './gateway-metrics.js';
import type { PolicyControl } from './policy-control.js';
import type { ConsentDefaults } from './request-controls.js';

export interface GatewayLimits {
  /** Largest accepted request body, in bytes. */
  bodyLimitBytes: number;
  /** Concurrent requests per tenant (API key) before 429. */
  concurrencyPerKey: number;
}

/**
 * What a request samples with where it names nothing: `--max-tokens`, and the model's own
 * sampling defaults (its generation_config.json, or `--temperature`, `--top-p`, `--top-k`).
 */
export interface SamplingDefaults {
  maxTokens: number;
  temperature: number;
  topP: number;
  /** Absent: no top-k filter. */
  topK?: number;
}

/** What the gateway may do with the record store: it never claims work or writes policy versions. */
export type GatewayStore = TurnLog & RecordReads & UserMemory & Pick<PolicyRegistry, 'listPolicyVersions' | 'trainingSummary'> & Pick<TrainingQueue, 'readySamplesByUser'>;

/** What the gateway does with each user's memory (`--user-memory`, `docs/memory.md`). */
export interface UserMemorySettings {
  mode: UserMemoryMode;
  /** Entries kept per user (`--user-memory-entries`). */
  maximumEntries: number;
  /** Estimated tokens of memory added to a prompt (`--user-memory-tokens`). */
  maximumTokens: number;
}

export interface GatewayContext {
  engine: InferenceEngine;
  /** The roles of the record store the gateway plays: it records turns and feedback, and serves the admin and dashboard reads. */
  store: GatewayStore;
  authenticator: ApiKeyAuthenticator;
  metrics: GatewayMetrics;
  logger: Logger;
  limits: GatewayLimits;
  samplingDefaults: SamplingDefaults;
  /** Extra model names accepted as aliases of the served model. */
  modelAliases: readonly string[];
  /** Epoch milliseconds. */
  now: () => number;
  /** Unique ids with a readable prefix (`turn`, `session`, ...). */
  createId: (prefix: string) => string;
  /** Policy versions and training; without it the policy admin routes answer `unsupported`. */
  policies?: PolicyControl;
  /** What each tenant's requests consent to when their headers say nothing (`--key-consent`); absent tenants consent to all. */
  consentDefaults?: ReadonlyMap<string, ConsentDefaults>;
  /** Erases sessions, tenants and periods (`DELETE /admin/sessions/{id}`, `POST /admin/erasures`); without it those answer `unsupported`. */
  eraser?: DataEraser;
  /** Each user's memory: filled from feedback, added to requests, edited by the admin routes; absent, `off`. */
  userMemory?: UserMemorySettings;
  /** Sessions keep the policy version they started with (`--pin-sessions`). */
  pinSessions?: boolean;
  /** Which version a session gets while a canary runs (`serving/policy-lifecycle.ts`); absent: the served version for all. */
  policyRouting?: PolicyRouting;
  /** Each user's own version (`--policy-scope user`); absent: every user is served the served version. */
  userPolicies?: UserPolicyRouting;
  /** The text of each token (alone) of the served model, for the dashboard's token view; absent without a tokenizer. */
  decodeTokens?: (tokenIds: readonly number[]) => Promise<string[]>;
  /** Results of experiment runs (`--results-dir`), for the dashboard's Experiments page. */
  experiments?: ExperimentCharts;
  /** The dashboard's built files (`GET /` and `/dashboard/*`); absent, `GET /` says how to build them. */
  dashboardAssets?: DashboardAssets;
}

/** A built static file: its bytes and content type. */
export interface DashboardAsset {
  body: Uint8Array;
  contentType: string;
}

export interface DashboardAssets {
  /** The file at `path` (relative, `index.html` for the page itself); null when there is none. */
  get(path: string): DashboardAsset | null;
}

/** Version routing by user (`--policy-scope user`), as the composition root hands it to the gateway. */
export interface UserPolicyRouting {
  /** The version a request of `user` is served: the user's active version, else the base (0). */
  versionFor(user: string): Promise<PolicyVersion>;
  /** The user owning `version` (null: the global lineage); undefined for an unknown version. */
  ownerOf(version: PolicyVersion): Promise<string | null | undefined>;
}

/** Version routing by session, as the composition root hands it to the gateway (the canary cohort). */
export interface PolicyRouting {
  /** Whether any session is routed now: only then do requests wait for their session before generating. */
  routing(): boolean;
  /** The version `sessionId` is served; undefined for the served version. */
  versionFor(sessionId: string): PolicyVersion | undefined;
}
