/**
 * The per-user side of the trainer (`--policy-scope user`): before each step it enforces the
 * samples-kept quota (a user's oldest ready samples beyond it are dropped, `user-quota`), picks
 * the lineage to train fairly (`core/pick-user-to-train.ts`), and gives the step that lineage's
 * engine at its active version. A step then trains that user's samples alone, on that engine, and
 * commits a version the user owns.
 *
 * Each user trains on a lineage of the training engine of its own (`TrainingEngine.lineage`: its
 * own adapter, weights and optimizer state; one Tinker training client per user, up to the bound;
 * the local engine swaps them on its one worker through saved states it never prunes). The global
 * lineage (samples without a user) is the engine's own. A lineage continues from its own latest
 * state, so it is moved only when that is not its active version: after a rollback, or the first
 * time this process trains it (a restart), it is restored from the saved state of the step that
 * made the version, else from the version's weights with fresh optimizer state. A user's first
 * step starts at the base, where a lineage begins.
 */
import { pickUserToTrain, readySamplesOverQuota, trainingActivityOf, type UserQuotas } from '../core/pick-user-to-train.js';
import { partitionByStaleness } from '../core/rl/policy-loss.js';
import { ClawrlError } from '../spec/clawrl-error.js';
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

/** The lineage a step trains: whose, on which engine, from which version, and how stale its samples are. */
export interface LineageStep {
  /** Null: the global lineage (samples without a user). */
  user: string | null;
  /** The lineage's engine, its weights at `parent`: the training engine's lineage of the user, the engine itself for the global one. */
  engine: TrainingEngine;
  /** The lineage's active version (the base, 0, for a user without one): the new version's parent. */
  parent: PolicyVersion;
  /** Splits claimed samples by staleness counted in this lineage's versions, not every lineage's. */
  partition(samples: readonly TrainingSample[], maxStaleness: number): { fresh: TrainingSample[]; stale: TrainingSample[] };
}

export interface UserLineages {
  /** Drops what exceeds the quotas, picks the next lineage and moves its engine to its active version; null when no lineage is due. */
  next(minimumReady: number): Promise<LineageStep | null>;
  /** The lineage's weights are at `version` (its step just committed, or an activation reset them). */
  trained(user: string | null, version: PolicyVersion): void;
  /**
   * The lineage's weights are unknown (a failed step): moves them back to `version` now, which also
   * clears gradients a failed step left, that would otherwise hold the engine's client from every other lineage.
   */
  recover(user: string | null, version: PolicyVersion): Promise<void>;
}

/** Position of `version` among the lineage's versions (ascending): how many of them it is not older than, less one. */
function positionIn(lineage: readonly PolicyVersion[], version: PolicyVersion): number {
  return Math.max(0, lineage.filter((own) => own <= version).length - 1);
}

export function createUserLineages(options: UserLineagesOptions): UserLineages {
  const { store, trainingEngine, logger, quotas } = options;
  const lineageOf = trainingEngine.lineage?.bind(trainingEngine);
  if (lineageOf === undefined) {
    throw new ClawrlError('configuration_error', `--policy-scope user trains a lineage per user: the training engine '${trainingEngine.engineId}' has none (use --trainer local or tinker).`, { param: 'policyScope' });
  }
  const engineOf = (user: string | null): TrainingEngine => (user === null ? trainingEngine : lineageOf(user));
  /** The version each lineage's weights are at, where known; a lineage not in it is moved before it trains. */
  const positions = new Map<string | null, PolicyVersion>();
  /** Lineages this process has moved or trained: the others are still at the base, where a lineage begins. */
  const touched = new Set<string | null>();

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

  /**
   * The lineage's weights at its active version: as they are when its own latest state is that
   * version (or it was never touched and the version is the base), else the saved state of the step
   * that made the version, else the version's weights with fresh optimizer state (a rollback).
   */
  async function moveTo(user: string | null, active: PolicyVersion): Promise<void> {
    if (positions.get(user) === active) return;
    const untouched = !touched.has(user);
    touched.add(user);
    positions.delete(user);
    if (untouched && user !== null && active === 0) {
      positions.set(user, active);
      return;
    }
    const engine = engineOf(user);
    const last = (await store.trainingSummary({ user })).lastStep;
    if (last !== null && last.policyVersion === active && last.checkpoint !== null) {
      try {
        await engine.loadState(last.checkpoint);
        positions.set(user, active);
        return;
      } catch (error) {
        logger.warn('cannot load the lineage\'s saved state; continuing from its weights with fresh optimizer state', { user, version: active, error: String(error) });
      }
    }
    await engine.resetWeights(await options.serving.artifactOf(active));
    positions.set(user, active);
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
        engine: engineOf(user),
        parent,
        partition(samples, maxStaleness) {
          const positioned = samples.map((sample) => ({ sample, policyVersion: positionIn(lineage, sample.policyVersion) }));
          const { fresh, stale } = partitionByStaleness(positioned, newest, maxStaleness);
          return { fresh: fresh.map((entry) => entry.sample), stale: stale.map((entry) => entry.sample) };
        },
      };
    },
    trained(user, version) {
      touched.add(user);
      positions.set(user, version);
    },
    async recover(user, version) {
      touched.add(user);
      positions.delete(user);
      await moveTo(user, version);
    },
  };
}
