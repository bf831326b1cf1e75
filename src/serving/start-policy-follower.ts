/**
 * Keeps one process in step with the store's active policy version: on every `policy-published`
 * event (its own durable consumer, so every process gets every event) and on a slow timer, it
 * reads the active version and hands it to `follow`. The event makes a switch quick; the timer
 * makes it certain when an event was never published (NATS down at that moment) or the process
 * shares its consumer name with another one. `follow` runs one call at a time and must be
 * idempotent: it is called with the same version many times.
 */
import type { EventBus } from '../spec/event-bus.js';
import type { PolicyArtifact, PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyRegistry } from '../spec/policy-registry.js';
import type { PolicyServing } from './policy-serving.js';
import type { RecordStore } from '../spec/record-store.js';

export interface PolicyFollowerOptions {
  store: Pick<PolicyRegistry, 'trainingSummary'>;
  bus: EventBus;
  /** The durable consumer name: unique per process, stable across its restarts. */
  consumer: string;
  follow: (activeVersion: PolicyVersion) => Promise<void>;
  logger: Logger;
  /** How often the store is checked without an event; default 15 s. */
  intervalMs?: number;
}

export interface PolicyFollower {
  close(): Promise<void>;
}

/** The usual `follow`: serve the active version in this process's engine unless it already does. */
export function serveActiveVersion(serving: Pick<PolicyServing, 'servedVersion' | 'artifactOf' | 'serve'>): (version: PolicyVersion) => Promise<void> {
  return async (version) => {
    if (serving.servedVersion === version) return;
    const artifact: PolicyArtifact = await serving.artifactOf(version);
    await serving.serve(artifact);
  };
}

export function startPolicyFollower(options: PolicyFollowerOptions): PolicyFollower {
  const { store, bus, logger } = options;
  const stopping = new AbortController();
  let chain: Promise<void> = Promise.resolve();

  /** Resolves false when the store could not be read or the version not served; the caller retries. */
  function synchronize(): Promise<boolean> {
    const run = chain.then(async () => {
      if (stopping.signal.aborted) return true;
      try {
        const active = (await store.trainingSummary()).activeVersion ?? 0;
        await options.follow(active);
        return true;
      } catch (error) {
        logger.error('cannot switch to the active policy version; retrying', { error: String(error) });
        return false;
      }
    });
    chain = run.then(() => undefined);
    return run;
  }

  const timer = setInterval(() => void synchronize(), options.intervalMs ?? 15_000);
  timer.unref();

  const listening = (async () => {
    try {
      for await (const message of bus.subscribe('policy-published', { consumer: options.consumer, signal: stopping.signal })) {
        const synchronized = await synchronize();
        try {
          if (synchronized) await message.ack();
          else await message.nak(5_000);
        } catch (error) {
          // Unsettled, the message comes again after the ack wait: nothing is lost.
          if (!stopping.signal.aborted) logger.warn('settling a policy-published event failed', { error: String(error) });
        }
      }
    } catch (error) {
      if (!stopping.signal.aborted) logger.error('the policy-published subscription ended; relying on store checks', { error: String(error) });
    }
  })();

  return {
    async close() {
      stopping.abort();
      clearInterval(timer);
      await listening;
      await chain;
    },
  };
}
