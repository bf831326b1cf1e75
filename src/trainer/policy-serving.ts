/**
 * Which policy version the inference engine serves, kept in step with the record store: at
 * start-up the base version is recorded if the store has none and the active version is loaded
 * into the engine; activating a version (rollback or roll-forward) loads it into the engine first
 * and records the activation only once the engine serves it. Engines switch at request
 * boundaries, so in-flight requests finish on the version they started with.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine, PolicyArtifact, PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { RecordStore } from '../spec/record-store.js';

export interface PolicyServingOptions {
  store: RecordStore;
  engine: InferenceEngine;
  logger: Logger;
  now: () => number;
}

export interface PolicyServing {
  /** Records the base version when missing and serves the active version; returns it. */
  start(): Promise<PolicyVersion>;
  /** The version the engine was last told to serve. */
  readonly servedVersion: PolicyVersion;
  /** The stored artifact of a version; `not_found` for an unknown one. */
  artifactOf(version: PolicyVersion): Promise<PolicyArtifact>;
  /** Serves `version` and records the activation. */
  activate(version: PolicyVersion): Promise<PolicyArtifact>;
  /** Serves a version the trainer just committed (already active in the store). */
  serve(artifact: PolicyArtifact): Promise<void>;
}

/** The stored artifact of `version`; `not_found` when the store has no such version. */
export async function storedPolicyArtifact(store: RecordStore, version: PolicyVersion): Promise<PolicyArtifact> {
  const stored = await store.getPolicyArtifact(version);
  if (stored === null) throw new ClawrlError('not_found', `No policy version ${version}.`, { param: 'version' });
  return { version, kind: stored.kind, files: stored.files };
}

/** Records the base model as version 0 (active) in a store that has no version yet; returns the summary it read. */
export async function recordBaseVersionIfMissing(store: RecordStore, now: () => number): ReturnType<RecordStore['trainingSummary']> {
  const summary = await store.trainingSummary();
  if (summary.latestVersion === null) {
    await store.recordPolicyVersion(
      { version: 0, parent: null, kind: 'base', files: {}, step: null, samples: 0, metrics: null, createdAt: now() },
      { activate: true },
    );
  }
  return summary;
}

export function createPolicyServing(options: PolicyServingOptions): PolicyServing {
  const { store, engine, logger } = options;
  let servedVersion: PolicyVersion = 0;

  const artifactOf = (version: PolicyVersion): Promise<PolicyArtifact> => storedPolicyArtifact(store, version);

  async function serve(artifact: PolicyArtifact): Promise<void> {
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

  return {
    get servedVersion() {
      return servedVersion;
    },
    artifactOf,
    async start() {
      const summary = await recordBaseVersionIfMissing(store, options.now);
      const active = summary.activeVersion ?? 0;
      if (active !== 0) {
        try {
          await serve(await artifactOf(active));
        } catch (error) {
          logger.error('cannot serve the active policy version; serving the base model', { version: active, error: String(error) });
          await store.activatePolicyVersion(0, options.now());
          await serve({ version: 0, kind: 'base', files: {} });
        }
      }
      logger.info('serving policy version', { version: servedVersion });
      return servedVersion;
    },
    async activate(version) {
      const artifact = await artifactOf(version);
      await serve(artifact);
      await store.activatePolicyVersion(version, options.now());
      logger.info('activated policy version', { version });
      return artifact;
    },
    serve,
  };
}
