/**
 * Policy serving that tells the other processes: after a version is served because the trainer
 * published it or an admin activated it, `policy-published` goes out on the bus, and every
 * gateway and judge (`startPolicyFollower`) loads the store's active version into its engine.
 * Publishing is best effort: followers also re-check the store periodically.
 */
import type { EventBus } from '../spec/event-bus.js';
import type { PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyServing } from './policy-serving.js';

/** Publishes `policy-published` for `version`, best effort: a failure is logged, and the followers' store checks catch up. */
export async function announcePolicyVersion(bus: EventBus, logger: Logger, version: PolicyVersion): Promise<void> {
  try {
    await bus.publish('policy-published', { version });
  } catch (error) {
    logger.warn('publishing policy-published failed; other processes pick the version up on their next store check', {
      version,
      error: String(error),
    });
  }
}

export function createPublishingPolicyServing(serving: PolicyServing, bus: EventBus, logger: Logger): PolicyServing {
  const announce = (version: PolicyVersion) => announcePolicyVersion(bus, logger, version);

  return {
    get servedVersion() {
      return serving.servedVersion;
    },
    artifactOf: (version) => serving.artifactOf(version),
    start: () => serving.start(),
    status: () => serving.status(),
    close: () => serving.close(),
    async activate(version, reason) {
      const artifact = await serving.activate(version, reason);
      await announce(version);
      return artifact;
    },
    async serve(artifact) {
      try {
        await serving.serve(artifact);
      } finally {
        // The version is committed and active in the store whether or not this process's engine could load it.
        await announce(artifact.version);
      }
    },
  };
}
