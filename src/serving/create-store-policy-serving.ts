/**
 * Policy serving for the trainer process of a distributed deployment, which serves no requests:
 * it keeps the store's policy versions and activations exactly as `createPolicyServing` does,
 * without an engine to load them into. The gateways and judges load them from the store when
 * `createPublishingPolicyServing` announces them.
 */
import type { PolicyArtifact, PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyRegistry } from '../spec/policy-registry.js';
import { recordBaseVersionIfMissing, storedPolicyArtifact, type PolicyServing } from './policy-serving.js';
import type { RecordStore } from '../spec/record-store.js';

export interface StorePolicyServingOptions {
  store: PolicyRegistry;
  logger: Logger;
  now: () => number;
}

export function createStorePolicyServing(options: StorePolicyServingOptions): PolicyServing {
  const { store, logger } = options;
  let servedVersion: PolicyVersion = 0;

  const artifactOf = (version: PolicyVersion): Promise<PolicyArtifact> => storedPolicyArtifact(store, version);

  return {
    get servedVersion() {
      return servedVersion;
    },
    artifactOf,
    async start() {
      const summary = await recordBaseVersionIfMissing(store, options.now);
      servedVersion = summary.activeVersion ?? 0;
      return servedVersion;
    },
    async activate(version, reason) {
      const artifact = await artifactOf(version);
      // Re-recording the version that is already active would only add noise to the history,
      // and could undo an activation another process made in the meantime.
      if ((await store.trainingSummary()).activeVersion !== version) {
        await store.activatePolicyVersion(version, options.now(), reason === undefined ? {} : { reason });
        logger.info('activated policy version', { version });
      }
      servedVersion = version;
      return artifact;
    },
    async serve(artifact) {
      servedVersion = artifact.version;
    },
    // No engine: nothing is loaded, nothing is retried.
    status: () => ({ role: 'gateway', engine: 'none', servedVersion, pending: null }),
    close: () => undefined,
  };
}
