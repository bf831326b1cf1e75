/**
 * Erasure as the server runs it (`DELETE /admin/sessions/{id}`, `clawrl data delete`, the retention
 * schedule): the store erases the records and marks the versions they trained, the bus's events of
 * them are erased, and `--on-delete` decides what follows for the versions:
 * - `mark`: nothing more; the marks show in `/admin/policies` and the receipt.
 * - `retire`: serving (and training) move back to the newest version untouched by erased samples,
 *   and every tainted version is retired: its lifecycle state becomes `retired` with the reason, and
 *   the erasure's own mark records it (`retiredAt`), which keeps it from being activated again (a
 *   `retired` state alone also names a version merely superseded, which a person may roll back to).
 * - `retrain`: retire, then the remaining samples that trained a tainted version go back in the
 *   training queue and one step runs at once, from the untouched version, on them.
 * Once the action has run, the served version's lineage holds no erased sample (unless the action is
 * `mark`, which by choice keeps serving what it served).
 */
import { untaintedFallbackOf } from '../core/tainted-versions.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyRegistry } from '../spec/policy-registry.js';
import type { ErasureReceipt, ErasureTarget, RecordErasure, TaintedVersion } from '../spec/record-erasure.js';
import type { PolicyControl } from './policy-control.js';

export const onDeleteActions = ['mark', 'retire', 'retrain'] as const;
// How often an erasure looks whether the training step it waits for has ended.
const trainingPollMs = 50;
export type OnDeleteAction = (typeof onDeleteActions)[number];

/** The ids an erasure removed, for erasing the events that name them. */
export interface ErasedIds {
  sessionIds: readonly string[];
  turnIds: readonly string[];
  sampleIds: readonly string[];
}

export interface DataEraserOptions {
  store: RecordErasure & Pick<PolicyRegistry, 'listPolicyVersions' | 'trainingSummary' | 'setPolicyVersionState'>;
  onDelete: OnDeleteAction;
  /** Serving and training; without it `retire` and `retrain` only record the retirement. */
  policies?: PolicyControl;
  /** Erases the bus's retained events naming these ids; returns how many (absent: the bus keeps nothing durable). */
  forgetEvents?: (ids: ErasedIds) => Promise<number>;
  now: () => number;
  logger: Logger;
}

/** What an erasure did, the receipt first. */
export interface DataErasureResult extends ErasureReceipt {
  /** Events erased from the bus; null when the bus keeps none (in memory). */
  eventsErased: number | null;
  action: {
    onDelete: OnDeleteAction;
    /** The version serving moved back to; null when it did not move. */
    activated: PolicyVersion | null;
    /** Versions retired by this erasure. */
    retired: PolicyVersion[];
    /** Remaining samples put back in the training queue. */
    requeued: number;
    /** The version the retraining step published; null when none ran. */
    retrainedVersion: PolicyVersion | null;
  };
}

export interface DataEraser {
  erase(target: ErasureTarget): Promise<DataErasureResult>;
  /** The samples that trained `version`, erased ones flagged. */
  lineage(version: PolicyVersion): Promise<{ sampleId: string; erased: boolean }[]>;
  /** The versions whose lineage holds an erased sample, with their marks. */
  taintedVersions(): Promise<TaintedVersion[]>;
}

export function createDataEraser(options: DataEraserOptions): DataEraser {
  const { store, logger } = options;
  // One erasure at a time: the action of one reads the marks the other writes.
  let chain: Promise<unknown> = Promise.resolve();

  async function retire(at: number): Promise<{ activated: PolicyVersion | null; retired: PolicyVersion[]; tainted: PolicyVersion[] }> {
    const taints = await store.listTaintedVersions();
    const tainted = new Set(taints.map((entry) => entry.version));
    const served = (await store.trainingSummary()).activeVersion;
    let activated: PolicyVersion | null = null;
    if (served !== null && tainted.has(served)) {
      const fallback = untaintedFallbackOf(await store.listPolicyVersions(), tainted, served);
      if (options.policies === undefined) {
        throw new ClawrlError('unsupported', `Version ${served} is tainted, and this server cannot move serving; activate version ${fallback} yourself.`);
      }
      await options.policies.activate(fallback, `serving moved back from version ${served}, trained on erased data`);
      activated = fallback;
    }
    const retired = taints.filter((entry) => entry.retiredAt === null).map((entry) => entry.version);
    await store.retireVersions(retired, at);
    for (const version of retired) {
      await store.setPolicyVersionState(version, 'retired', { reason: 'its lineage holds samples of erased data', at });
    }
    return { activated, retired, tainted: [...tainted] };
  }

  /**
   * Erases with this server's training held: a step in flight may hold samples the erasure deletes,
   * and the version it would commit would then carry them without a lineage naming them. A trainer
   * in another process (`clawrl trainer`) is not held: the store refuses its commit when a sample it
   * trained on is gone (`stores/samples-gone-error.ts`), and it trains again on what remains.
   */
  async function eraseWithTrainingHeld(target: ErasureTarget, at: number): ReturnType<typeof store.erase> {
    const training = options.policies?.training ?? null;
    if (training === null) return store.erase(target, at);
    const wasPaused = training.status().paused;
    training.pause();
    try {
      while (training.status().training) await new Promise((resolve) => setTimeout(resolve, trainingPollMs));
      return await store.erase(target, at);
    } finally {
      if (!wasPaused) training.resume();
    }
  }

  async function run(target: ErasureTarget): Promise<DataErasureResult> {
    const at = options.now();
    const { receipt, ...ids } = await eraseWithTrainingHeld(target, at);
    let eventsErased: number | null = null;
    if (options.forgetEvents !== undefined) {
      try {
        eventsErased = await options.forgetEvents(ids);
      } catch (error) {
        // The records are gone already; the receipt says the events were not (null), and the log why.
        logger.error('erasing the events of erased records failed', { error: String(error) });
      }
    }
    const action: DataErasureResult['action'] = { onDelete: options.onDelete, activated: null, retired: [], requeued: 0, retrainedVersion: null };
    if (options.onDelete !== 'mark' && receipt.affectedVersions.length > 0) {
      const retirement = await retire(at);
      action.activated = retirement.activated;
      action.retired = retirement.retired;
      if (options.onDelete === 'retrain') {
        action.requeued = await store.requeueSamplesOf(retirement.tainted, at);
        const training = options.policies?.training ?? null;
        if (training !== null && action.requeued > 0 && !training.status().paused) {
          const outcome = await training.trainNow();
          if (outcome.kind === 'trained') action.retrainedVersion = outcome.step.policyVersion;
        }
      }
    }
    logger.info('erased', { target, erased: receipt.erased, affectedVersions: receipt.affectedVersions, action });
    return { ...receipt, eventsErased, action };
  }

  return {
    erase(target) {
      const result = chain.then(() => run(target));
      chain = result.catch(() => undefined);
      return result;
    },
    lineage: (version) => store.listLineage(version),
    taintedVersions: () => store.listTaintedVersions(),
  };
}
