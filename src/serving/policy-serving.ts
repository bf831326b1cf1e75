/**
 * Which policy version the inference engine serves, kept in step with the record store: at
 * start-up the base version is recorded if the store has none and the active version is loaded
 * into the engine; activating a version (rollback or roll-forward) loads it into the engine first
 * and records the activation only once the engine serves it. Engines switch at request
 * boundaries, so in-flight requests finish on the version they started with.
 *
 * A version the store already made active (a trainer's commit, another process's activation, the
 * active version at start-up) that the engine fails to load is retried with a doubling delay until
 * it loads or a newer one replaces it; the engine serves the previous version (at start-up the
 * base) meanwhile. Only a version the engine can never load (`unsupported`, missing) makes the base
 * active again at start-up. Loads run one at a time.
 */
import { retryDelayMs } from '../core/retry-delay.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine, PolicyArtifact, PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyServingStatus } from '../spec/policy-serving-status.js';
import type { PolicyRegistry, TrainingSummary } from '../spec/policy-registry.js';

export interface PolicyServingOptions {
  store: PolicyRegistry;
  engine: InferenceEngine;
  logger: Logger;
  now: () => number;
  /** Whose engine it is, for the status; default `gateway`. */
  role?: PolicyServingStatus['role'];
  /** First delay before a failed load is tried again (default 1 s), doubling up to `maxRetryDelayMs` (default 30 s). */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
}

export interface PolicyServing {
  /** Records the base version when missing and serves the active version; returns it. */
  start(): Promise<PolicyVersion>;
  /** The version the engine was last told to serve. */
  readonly servedVersion: PolicyVersion;
  /** The stored artifact of a version; `not_found` for an unknown one. */
  artifactOf(version: PolicyVersion): Promise<PolicyArtifact>;
  /** Serves `version` and records the activation with `reason` (default "activated"). */
  activate(version: PolicyVersion, reason?: string): Promise<PolicyArtifact>;
  /** Serves a version the trainer just committed (already active in the store); retried until it loads when it fails. */
  serve(artifact: PolicyArtifact): Promise<void>;
  /** What the engine serves, and a version it is still trying to load. */
  status(): PolicyServingStatus;
  /** Stops retrying. */
  close(): void;
}

/** The stored artifact of `version`; `not_found` when the store has no such version. */
export async function storedPolicyArtifact(store: Pick<PolicyRegistry, 'getPolicyArtifact'>, version: PolicyVersion): Promise<PolicyArtifact> {
  const stored = await store.getPolicyArtifact(version);
  if (stored === null) throw new ClawrlError('not_found', `No policy version ${version}.`, { param: 'version' });
  return { version, kind: stored.kind, files: stored.files };
}

/** Records the base model as version 0 (active) in a store that has no version yet; returns the summary it read. */
export async function recordBaseVersionIfMissing(store: PolicyRegistry, now: () => number): Promise<TrainingSummary> {
  const summary = await store.trainingSummary();
  if (summary.latestVersion === null) {
    await store.recordPolicyVersion(
      { version: 0, parent: null, kind: 'base', files: {}, step: null, samples: 0, metrics: null, createdAt: now() },
      { activate: true },
    );
  }
  return summary;
}

/** Errors no retry can mend: the engine cannot load this kind of version at all, or it does not exist. */
const finalCodes = new Set(['unsupported', 'configuration_error', 'not_found', 'invalid_request']);
function retryable(error: unknown): boolean {
  return !(ClawrlError.isInstance(error) && finalCodes.has(error.code));
}

export function createPolicyServing(options: PolicyServingOptions): PolicyServing {
  const { store, engine, logger } = options;
  const initialDelayMs = options.retryDelayMs ?? 1_000;
  const maxDelayMs = options.maxRetryDelayMs ?? 30_000;
  let servedVersion: PolicyVersion = 0;
  let pending: PolicyServingStatus['pending'] = null;
  /** The version serving should reach: what `serve` was last asked for. */
  let target: PolicyArtifact | null = null;
  let retryTimer: NodeJS.Timeout | undefined;
  let closed = false;
  let chain: Promise<unknown> = Promise.resolve();

  const artifactOf = (version: PolicyVersion): Promise<PolicyArtifact> => storedPolicyArtifact(store, version);

  /** Loads one version at a time, in call order. */
  function enqueue<Result>(work: () => Promise<Result>): Promise<Result> {
    const next = chain.then(work, work);
    chain = next.catch(() => undefined);
    return next;
  }

  async function load(artifact: PolicyArtifact): Promise<void> {
    if (!engine.capabilities.policyLoading) {
      if (artifact.kind === 'base') {
        servedVersion = artifact.version;
        return;
      }
      throw new ClawrlError('unsupported', `The ${engine.engineId} engine cannot load policy versions; it serves the base model only.`);
    }
    await engine.loadPolicy(artifact);
    servedVersion = artifact.version;
  }

  function clearRetry(): void {
    if (retryTimer !== undefined) clearTimeout(retryTimer);
    retryTimer = undefined;
  }

  function scheduleRetry(artifact: PolicyArtifact, attempts: number): number | null {
    clearRetry();
    if (closed) return null;
    const delayMs = retryDelayMs(attempts, { initialMs: initialDelayMs, maxMs: maxDelayMs });
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (target === artifact) void attempt(artifact).catch(() => undefined);
    }, delayMs);
    retryTimer.unref();
    return options.now() + delayMs;
  }

  /** Records a failed load of the target and schedules the next attempt when one can succeed. */
  function recordFailure(artifact: PolicyArtifact, error: unknown): void {
    const attempts = pending?.version === artifact.version ? pending.attempts + 1 : 1;
    const retryAt = retryable(error) ? scheduleRetry(artifact, attempts) : null;
    pending = { version: artifact.version, attempts, error: error instanceof Error ? error.message : String(error), retryAt };
    logger.error(retryAt === null ? 'cannot load the policy version; serving the previous one' : 'cannot load the policy version yet; serving the previous one and retrying', {
      version: artifact.version,
      serving: servedVersion,
      attempts,
      ...(retryAt === null ? {} : { retryInMs: retryAt - options.now() }),
      error: pending.error,
    });
  }

  /** Loads the target; on failure records it, schedules the next attempt and rethrows. */
  function attempt(artifact: PolicyArtifact): Promise<void> {
    return enqueue(async () => {
      if (closed || target !== artifact) return;
      if (servedVersion === artifact.version && pending === null) return;
      try {
        await load(artifact);
        if (pending !== null) logger.info('loaded the policy version after failed attempts', { version: artifact.version, attempts: pending.attempts });
        pending = null;
      } catch (error) {
        recordFailure(artifact, error);
        throw error;
      }
    });
  }

  async function serve(artifact: PolicyArtifact): Promise<void> {
    target = artifact;
    clearRetry();
    await attempt(artifact);
  }

  return {
    get servedVersion() {
      return servedVersion;
    },
    artifactOf,
    async start() {
      const summary = await recordBaseVersionIfMissing(store, options.now);
      const active = summary.activeVersion ?? 0;
      if (active !== 0) {
        let artifact: PolicyArtifact | undefined;
        try {
          const stored = await artifactOf(active);
          artifact = stored;
          await enqueue(() => load(stored));
        } catch (error) {
          if (artifact !== undefined && retryable(error)) {
            // A remote engine that is not ready yet, or refuses for now: the base meanwhile, the active version once it loads.
            target = artifact;
            recordFailure(artifact, error);
          } else {
            logger.error('cannot serve the active policy version; serving the base model', { version: active, error: String(error) });
            await store.activatePolicyVersion(0, options.now(), { reason: `version ${active} cannot be served: ${String(error)}` });
            await enqueue(() => load({ version: 0, kind: 'base', files: {} }));
          }
        }
      }
      logger.info('serving policy version', { version: servedVersion });
      return servedVersion;
    },
    async activate(version, reason) {
      const artifact = await artifactOf(version);
      // A failed activation changes nothing: the admin sees the error, serving and the store stay as they were.
      await enqueue(() => load(artifact));
      target = artifact;
      pending = null;
      clearRetry();
      // Following an activation made elsewhere (no reason of its own) must not overwrite the reason recorded then.
      if (reason !== undefined || (await store.trainingSummary()).activeVersion !== version) {
        await store.activatePolicyVersion(version, options.now(), reason === undefined ? {} : { reason });
      }
      logger.info('activated policy version', { version, ...(reason === undefined ? {} : { reason }) });
      return artifact;
    },
    serve,
    status: () => ({ role: options.role ?? 'gateway', engine: engine.engineId, servedVersion, pending }),
    close() {
      closed = true;
      clearRetry();
    },
  };
}
