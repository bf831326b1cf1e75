/**
 * The per-user side of the trainer (`--policy-scope user`): before each step it enforces the
 * samples-kept quota (a user's oldest ready samples beyond it are dropped, `user-quota`), picks
 * the lineage to train fairly (`core/pick-user-to-train.ts`), and moves the training weights to
 * that lineage's active version: the state saved after the step that made it, or its weights when
 * no saved state matches (a rollback, a first step from the base). A step then trains that user's
 * samples alone and commits a version the user owns.
 *
 * The training engine holds one set of weights, so training alternates lineages by saving the
 * state after every step (as the trainer always does) and restoring the next lineage's.
 */
import { pickUserToTrain, readySamplesOverQuota, trainingActivityOf, type UserQuotas } from '../core/pick-user-to-train.js';
import { partitionByStaleness } from '../core/rl/policy-loss.js';
import type { PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyRegistry } from '../spec/policy-registry.js';
import type { TrainingSample } from '../spec/records.js';
import type { TrainingEngine } from '../spec/training-engine.js';
import type { TrainingQueue } from '../spec/training-queue.js';
import type { PolicyServing } from '../serving/policy-serving.js';

export interface UserLineagesOptions {
  store: TrainingQueue & Pick<PolicyRegistry, 'trainingSummary' | 'listPolicyVersions'>;
  trainingEngine: TrainingEngine;
  serving: Pick<PolicyServing, 'artifactOf'>;
  logger: Logger;
  now: () => number;
  workerId: string;
  leaseMs: number;
  quotas: UserQuotas;
}

/** The lineage a step trains: whose, from which version, and how stale its samples are. */
export interface LineageStep {
  /** Null: the global lineage (samples without a user). */
  user: string | null;
  /** The lineage's active version (the base, 0, for a user without one): the new version's parent. */
  parent: PolicyVersion;
  /** Splits claimed samples by staleness counted in this lineage's versions, not every lineage's. */
  partition(samples: readonly TrainingSample[], maxStaleness: number): { fresh: TrainingSample[]; stale: TrainingSample[] };
}

export interface UserLineages {
  /** Drops what exceeds the quotas, picks the next lineage and moves the weights to it; null when no lineage is due. */
  next(minimumReady: number): Promise<LineageStep | null>;
  /** The weights are at `version` of `user`'s lineage (its step just committed). */
  trained(user: string | null, version: PolicyVersion): void;
  /** The weights are no longer known to match any lineage (a failed step, an activation). */
  forget(): void;
}

/** Position of `version` among the lineage's versions (ascending): how many of them it is not older than, less one. */
function positionIn(lineage: readonly PolicyVersion[], version: PolicyVersion): number {
  return Math.max(0, lineage.filter((own) => own <= version).length - 1);
}

export function createUserLineages(options: UserLineagesOptions): UserLineages {
  const { store, trainingEngine, logger, quotas } = options;
  /** Where the training weights are: a lineage's version, or unknown. */
  let current: { user: string | null; version: PolicyVersion } | null = null;

  async function enforceSamplesKept(ready: readonly { user: string | null; ready: number }[]): Promise<void> {
    for (const entry of ready) {
      const excess = readySamplesOverQuota(entry.ready, quotas.samplesKept);
      if (excess === 0) continue;
      // Claimed oldest first, the excess is exactly the oldest ready samples; they never train.
      const oldest = await store.claimSamplesForTraining({ limit: excess, leaseMs: options.leaseMs, now: options.now(), workerId: options.workerId, user: entry.user });
      await store.updateSampleStatus({ ids: oldest.map((sample) => sample.id), status: 'dropped', reason: 'user-quota', at: options.now() });
      logger.info('dropped a user\'s oldest ready samples beyond the samples kept', { user: entry.user, count: oldest.length, samplesKept: quotas.samplesKept });
    }
  }

  /** Training weights at the lineage's active version: its saved state when the last step made it, else its weights. */
  async function moveTo(user: string | null, active: PolicyVersion): Promise<void> {
    if (current !== null && current.user === user && current.version === active) return;
    current = null;
    const summary = await store.trainingSummary({ user });
    const last = summary.lastStep;
    if (last !== null && last.policyVersion === active && last.checkpoint !== null) {
      try {
        await trainingEngine.loadState(last.checkpoint);
        current = { user, version: active };
        return;
      } catch (error) {
        logger.warn('cannot load the lineage\'s saved state; continuing from its weights with fresh optimizer state', { user, version: active, error: String(error) });
      }
    }
    await trainingEngine.resetWeights(await options.serving.artifactOf(active));
    current = { user, version: active };
  }

  return {
    async next(minimumReady) {
      const now = options.now();
      const ready = await store.readySamplesByUser(now);
      await enforceSamplesKept(ready);
      const versions = await store.listPolicyVersions();
      const activity = trainingActivityOf(versions, now);
      const candidates = ready.map((entry) => ({
        user: entry.user,
        ready: Math.min(entry.ready, quotas.samplesKept),
        lastTrainedAt: activity.get(entry.user)?.lastTrainedAt ?? null,
        stepsToday: activity.get(entry.user)?.stepsToday ?? 0,
      }));
      const picked = pickUserToTrain(candidates, { minimumReady, stepsPerDay: quotas.stepsPerDay });
      if (picked === null) return null;
      const user = picked.user;
      const own = versions.filter((version) => version.user === user);
      // A user with no version of its own starts from the base; the global lineage has the base among its versions.
      const lineage = [...new Set([0, ...own.map((version) => version.version)])].sort((left, right) => left - right);
      const parent = own.find((version) => version.active)?.version ?? 0;
      await moveTo(user, parent);
      const newest = positionIn(lineage, lineage.at(-1) ?? 0);
      return {
        user,
        parent,
        partition(samples, maxStaleness) {
          const positioned = samples.map((sample) => ({ sample, policyVersion: positionIn(lineage, sample.policyVersion) }));
          const { fresh, stale } = partitionByStaleness(positioned, newest, maxStaleness);
          return { fresh: fresh.map((entry) => entry.sample), stale: stale.map((entry) => entry.sample) };
        },
      };
    },
    trained(user, version) {
      current = { user, version };
    },
    forget() {
      current = null;
    },
  };
}
