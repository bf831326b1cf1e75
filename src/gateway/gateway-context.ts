/** What the gateway's routes share: seams, limits and the injected clock and id generator. */
import type { ExperimentCharts } from '../spec/experiment-charts.js';
import type { InferenceEngine, PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyServingStatus } from '../spec/policy-serving-status.js';
import type { RecordStore } from '../spec/record-store.js';
import type { TrainingStepRecord } from '../spec/records.js';
import type { ApiKeyAuthenticator } from './api-key-authenticator.js';
import type { GatewayMetrics } from './gateway-metrics.js';

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

export interface GatewayContext {
  engine: InferenceEngine;
  store: RecordStore;
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
  /** Sessions keep the policy version they started with (`--pin-sessions`). */
  pinSessions?: boolean;
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

/** What the admin routes may do to serving and training. */
export interface PolicyControl {
  /** Serves `version` from now on (and training continues from it); `not_found` for an unknown one. */
  activate(version: PolicyVersion): Promise<void>;
  /** Null when training is off (`--no-train`, or an engine that cannot load versions). */
  readonly training: TrainingControl | null;
  /** Which version each engine of this process serves (the gateway's, and the judge's own), and what is pending. */
  servingStatus?(): PolicyServingStatus[];
}

export interface TrainingControl {
  pause(): void;
  resume(): void;
  trainNow(): Promise<
    | { kind: 'trained'; step: TrainingStepRecord; samplesDropped: number }
    | { kind: 'all-stale'; samplesDropped: number }
    | { kind: 'idle' }
  >;
  status(): { paused: boolean; training: boolean; trainingVersion: PolicyVersion; samplesDroppedStale: number; failedSteps: number; trainEvery: number };
}
