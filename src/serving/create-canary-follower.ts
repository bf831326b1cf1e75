/**
 * The canary's routing in a gateway of a distributed deployment, where the trainer runs the
 * version lifecycle (`policy-lifecycle.ts`) and the store is the truth: the version in state
 * `canary` and the share its evidence names. Every gateway hashes a session id the same way
 * (`inSessionCohort`), so all of them put a session in the same cohort without talking to each
 * other. `synchronize` runs beside following the active version (`startPolicyFollower`: on each
 * `policy-published` event and on its timer): it stages a new canary's candidate on this gateway's
 * engine before routing anyone to it, and stops routing once the candidate is no longer a canary
 * (promoted: the active version serves everyone; rolled back: the incumbent does). The staged
 * version stays loaded, so requests in flight finish on it.
 */
import { inSessionCohort } from '../core/session-cohort.js';
import type { InferenceEngine, PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyRegistry } from '../spec/policy-registry.js';
import { storedPolicyArtifact } from './policy-serving.js';

export interface CanaryFollowerOptions {
  store: Pick<PolicyRegistry, 'listPolicyVersions' | 'getPolicyArtifact'>;
  engine: Pick<InferenceEngine, 'engineId' | 'stagePolicy'>;
  logger: Logger;
}

export interface CanaryFollower {
  /** Reads the store's canary and routes by it; throws when its candidate cannot be staged now (the follower retries). */
  synchronize(): Promise<void>;
  /** Whether a canary routes any session now. */
  routing(): boolean;
  /** The version a session is served while a canary runs; undefined for the served version. */
  versionFor(sessionId: string): PolicyVersion | undefined;
}

export function createCanaryFollower(options: CanaryFollowerOptions): CanaryFollower {
  const { store, engine, logger } = options;
  let routed: { version: PolicyVersion; share: number } | null = null;
  let warnedFor: PolicyVersion | null = null;

  return {
    async synchronize() {
      const canary = (await store.listPolicyVersions()).find((record) => record.state === 'canary' && !record.active && record.canary !== null);
      if (canary?.canary == null) {
        if (routed !== null) logger.info('canary routing ended', { version: routed.version });
        routed = null;
        return;
      }
      const share = canary.canary.share;
      if (routed?.version === canary.version && routed.share === share) return;
      if (engine.stagePolicy === undefined) {
        // Its cohort is served the incumbent here: the watch then sees fewer canary turns, never a failed request.
        if (warnedFor !== canary.version) logger.warn(`the ${engine.engineId} engine cannot serve canary version ${canary.version} beside the active one; its cohort is served the active version here`);
        warnedFor = canary.version;
        return;
      }
      await engine.stagePolicy(await storedPolicyArtifact(store, canary.version));
      routed = { version: canary.version, share };
      logger.info('canary routing started', { version: canary.version, share });
    },
    routing: () => routed !== null,
    versionFor(sessionId) {
      const current = routed;
      return current !== null && inSessionCohort('canary', sessionId, current.share) ? current.version : undefined;
    },
  };
}
