/**
 * The training loop. A step fires when `trainEvery` samples are ready (checked every
 * `pollIntervalMs`) or on demand (`trainNow`). It claims a batch under a lease (rollout groups
 * whole), drops and counts samples more than `maxStaleness` versions old, forms the batch's
 * advantages from the rewards and gaps stored (`core/rl/advantages.ts`: weights, clip, the group
 * and batch baselines are the trainer's alone), drops and counts the samples whose advantages all
 * came out 0 (they would push nothing and only dilute the step's mean), runs
 * forward-backward with the configured loss (`--loss`) and one optimizer step on the training
 * engine — or `trainEpochs` passes over the batch, each with its own optimizer step,
 * the later ones against the first pass's log-probs so the clip bounds them — publishes the
 * weights, saves the trainer state, commits version + step + sample statuses in one store write,
 * and has serving switch to the new version. A crash anywhere before the commit leaves the
 * samples leased until the lease ends (or until this trainer restarts and releases its own
 * leases) and the store unchanged; the trainer resumes from the checkpoint of the last committed
 * step.
 *
 * The trainer always continues from what is served: activating another version (a rollback)
 * resets the training weights to it, and a restart whose active version is not the last step's
 * starts from the active version's weights instead of the checkpoint.
 *
 * With `policyScope: 'user'` each step trains one lineage: the user picked fairly among those with
 * enough ready samples and steps left today, from that user's active version (the base for a first
 * step), on that user's samples alone, and commits a version that user owns (`user-lineages.ts`). The
 * step runs on the training engine's lineage of that user (`TrainingEngine.lineage`), so users' weights
 * and optimizer states never mix; an engine without lineages is refused for it.
 *
 * A configuration the engine cannot run (a loss it does not compute, a term it lacks) is refused
 * when the trainer is created (`core/rl/training-capability-problem.ts`), not trained as something else.
 */
import { advantagesOf, defaultAdvantageOptions, hasSignal, type AdvantageOptions, type SampleAdvantages } from '../core/rl/advantages.js';
import {
  decoupledFormOf,
  defaultPolicyLossOptions,
  partitionByStaleness,
  policyLoss,
  trainingLossOf,
  type PolicyLossOptions,
} from '../core/rl/policy-loss.js';
import { trainingCapabilityProblem } from '../core/rl/training-capability-problem.js';
import { decayedLearningRate, type LearningRateDecay } from '../core/rl/learning-rate-decay.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyRegistry } from '../spec/policy-registry.js';
import type { RecordReads } from '../spec/record-reads.js';
import type { TrainingQueue } from '../spec/training-queue.js';
import type { TrainingStepMetrics, TrainingStepRecord } from '../spec/records.js';
import type { ForwardBackwardOutput, TrainingEngine, TrainingLossName } from '../spec/training-engine.js';
import type { PolicyServing } from '../serving/policy-serving.js';
import type { LifecycleOutcome, PolicyLifecycle } from '../serving/policy-lifecycle.js';
import { datumOf, lossInputsOf, rolloutMismatchOf, withProximalLogprobs } from './loss-inputs-of.js';
import { defaultUserQuotas, type UserQuotas } from '../core/pick-user-to-train.js';
import { createUserLineages, type LineageStep } from './user-lineages.js';

export interface TrainerOptions {
  store: TrainingQueue & Pick<PolicyRegistry, 'trainingSummary' | 'listPolicyVersions' | 'activatePolicyVersion'> & Pick<RecordReads, 'counts'>;
  trainingEngine: TrainingEngine;
  serving: PolicyServing;
  logger: Logger;
  now: () => number;
  /** Holds the sample leases. Stable across restarts of one deployment, so a restart can release its own. */
  workerId: string;
  /** Ready samples per step; default 16. */
  trainEvery?: number;
  /**
   * Passes over each batch, each followed by an optimizer step, before one version is published;
   * default 1 (OpenClaw-RL's `TRAIN_EPOCHS`). Passes after the first take the PPO ratio and the
   * importance weight against the first pass's log-probs (ℓ_old), so the clip is a trust region.
   */
  trainEpochs?: number;
  /** Samples more versions old than this are dropped; default 2. */
  maxStaleness?: number;
  /** The named loss (`spec/training-engine.ts`); default `decoupled_ppo`. */
  lossName?: TrainingLossName;
  loss?: Partial<PolicyLossOptions>;
  /** How advantages are formed: w_rl, w_opd, the clip C, the reward baseline, the group's ÷ std (`core/rl/advantages.ts`); defaults 1, 1, 1, none, off. */
  advantages?: Partial<AdvantageOptions>;
  /**
   * k of the OPD support sets the judge builds (0: none), so the start-up check can refuse an
   * engine or loss that cannot train them; default 0.
   */
  supportTopK?: number;
  /** Halves the engine's learning rate every `halfLifeSteps` steps (`core/rl/learning-rate-decay.ts`); default constant. */
  learningRateDecay?: LearningRateDecay;
  /**
   * Where a committed version earns its users (gate, canary); absent or not gated, each version is
   * active at once. While one is evaluated no step runs; a rejected or rolled-back one sends the
   * training weights back to the incumbent.
   */
  lifecycle?: PolicyLifecycle;
  /**
   * `global` (the default): one lineage trained on everyone's samples. `user`: each step trains one
   * user's lineage on that user's samples alone (`user-lineages.ts`), on the engine's lineage of that user
   * (`TrainingEngine.lineage`, which the engine must offer); no gate or canary.
   */
  policyScope?: 'global' | 'user';
  /** With `policyScope: 'user'`: steps per user per day and ready samples kept per user; defaults `defaultUserQuotas`. */
  userQuotas?: Partial<UserQuotas>;
  /** Called after a user's lineage changed (a step committed or an activation), so whoever routes users to versions looks again. */
  onUserLineageChange?: () => void;
  /** Default 30 minutes: longer than any step. */
  leaseMs?: number;
  /** Default 1 s. */
  pollIntervalMs?: number;
}

export type TrainStepOutcome =
  | { kind: 'trained'; step: TrainingStepRecord; samplesDropped: number }
  /** Every claimed sample was too stale. */
  | { kind: 'all-stale'; samplesDropped: number }
  /** Every fresh claimed sample's advantages came out 0: dropped (`zero-advantage`), nothing trained. */
  | { kind: 'no-signal'; samplesDropped: number }
  | { kind: 'idle' };

export interface TrainerStatus {
  paused: boolean;
  /** A step is running now. */
  training: boolean;
  /** The version the training weights are at (the next step's parent); per user, the global lineage's. */
  trainingVersion: PolicyVersion;
  samplesDroppedStale: number;
  failedSteps: number;
  /** Ready samples per step: a step is due when at least this many are ready. */
  trainEvery: number;
  /** The committed version the gate or canary is evaluating; no step runs until it is decided. */
  evaluating: PolicyVersion | null;
}

export interface Trainer {
  /** Resumes from the store and the last checkpoint, then starts polling. */
  start(): Promise<void>;
  /** Runs one step now with up to `trainEvery` ready samples, after any running one. */
  trainNow(): Promise<TrainStepOutcome>;
  pause(): void;
  resume(): void;
  /** Serves `version` and continues training from it, recording `reason` with the activation. */
  activate(version: PolicyVersion, reason?: string): Promise<void>;
  status(): TrainerStatus;
  close(): Promise<void>;
}

export function createTrainer(options: TrainerOptions): Trainer {
  const { store, trainingEngine, serving, logger } = options;
  const trainEvery = options.trainEvery ?? 16;
  const trainEpochs = options.trainEpochs ?? 1;
  const maxStaleness = options.maxStaleness ?? 2;
  const lossOptions: PolicyLossOptions = { ...defaultPolicyLossOptions, ...options.loss };
  const loss = trainingLossOf(options.lossName ?? 'decoupled_ppo', lossOptions);
  // What the step metrics are computed with: the loss the engine was sent, as plain numbers.
  const { options: metricLoss, proximalIsRollout } = decoupledFormOf(loss);
  const advantageOptions: AdvantageOptions = { ...defaultAdvantageOptions, ...options.advantages };
  const learningRateDecay = options.learningRateDecay ?? {};
  const leaseMs = options.leaseMs ?? 30 * 60_000;
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  if (!Number.isInteger(trainEvery) || trainEvery < 1) throw new ClawrlError('configuration_error', `trainEvery must be a positive integer, got ${trainEvery}`);
  if (!Number.isInteger(trainEpochs) || trainEpochs < 1) throw new ClawrlError('configuration_error', `trainEpochs must be a positive integer, got ${trainEpochs}`);
  if (!Number.isInteger(maxStaleness) || maxStaleness < 0) throw new ClawrlError('configuration_error', `maxStaleness must be a non-negative integer, got ${maxStaleness}`);
  const problem = trainingCapabilityProblem({ loss: loss.name, lossOptions, trainEpochs, supportTopK: options.supportTopK ?? 0 }, trainingEngine);
  if (problem !== null) throw new ClawrlError('configuration_error', problem.message, { param: problem.option });

  let paused = false;
  let closed = false;
  let training = false;
  let trainingVersion: PolicyVersion = 0;
  /** What a failed step restores: the last saved state, else the served version's weights. */
  let lastCheckpoint: string | null = null;
  let samplesDroppedStale = 0;
  let failedSteps = 0;
  let chain: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const lifecycle = options.lifecycle?.gated === true ? options.lifecycle : null;
  let evaluating: PolicyVersion | null = null;
  const perUser = options.policyScope === 'user';
  if (perUser && lifecycle !== null) {
    throw new ClawrlError('configuration_error', '--policy-scope user trains each user\'s lineage without a gate or canary: drop --gate replay and --canary-share.', { param: 'policyScope' });
  }
  const lineages = perUser
    ? createUserLineages({ store, trainingEngine, serving, logger, now: options.now, workerId: options.workerId, leaseMs, quotas: { ...defaultUserQuotas, ...options.userQuotas } })
    : null;

  /** After the gate or canary decided: training continues from the version that serves. */
  function settle(outcome: LifecycleOutcome, incumbent: PolicyVersion): Promise<void> {
    return enqueue(async () => {
      evaluating = null;
      // An interruption is a person's activation, which already moved the training weights.
      if (outcome.kind !== 'rejected' && outcome.kind !== 'rolled-back') return;
      logger.info('training continues from the incumbent', { version: outcome.version, outcome: outcome.kind, incumbent });
      await continueFrom(incumbent);
      trainingVersion = incumbent;
      lastCheckpoint = null;
    });
  }

  /** Training weights from a served version; a version the engine cannot train from is a start-up error, not a silent restart. */
  async function continueFrom(version: PolicyVersion): Promise<void> {
    const artifact = await serving.artifactOf(version);
    try {
      await trainingEngine.resetWeights(artifact);
    } catch (error) {
      throw new ClawrlError(
        'configuration_error',
        `The trainer (${trainingEngine.info.trainParams} parameters) cannot continue from the served policy version ${version} (${artifact.kind}): ` +
          `activate a version it can train from (0 is the base) or change --train-params.`,
        { cause: error },
      );
    }
  }

  /** After a failure: the lineage's weights back where they were (per user, `lineage`'s, else the global one's). */
  async function restoreTrainingWeights(lineage: LineageStep | null = null): Promise<void> {
    if (lineages !== null) return lineages.recover(lineage?.user ?? null, lineage?.parent ?? trainingVersion);
    if (lastCheckpoint !== null) await trainingEngine.loadState(lastCheckpoint);
    else await continueFrom(trainingVersion);
  }

  /** One step: of any samples, or per user of the lineage due (`minimumReady` ready samples at least). */
  async function step(minimumReady: number): Promise<TrainStepOutcome> {
    const startedAt = options.now();
    const summary = await store.trainingSummary();
    let lineage: LineageStep | null = null;
    if (lineages !== null) {
      lineage = await lineages.next(minimumReady);
      if (lineage === null) return { kind: 'idle' };
    }
    const claimed = await store.claimSamplesForTraining({ limit: trainEvery, leaseMs, now: startedAt, workerId: options.workerId, ...(lineage === null ? {} : { user: lineage.user }) });
    if (claimed.length === 0) return { kind: 'idle' };
    const newest = summary.latestVersion ?? 0;
    const { fresh: current, stale } = lineage === null ? partitionByStaleness(claimed, newest, maxStaleness) : lineage.partition(claimed, maxStaleness);
    if (stale.length > 0) {
      await store.updateSampleStatus({ ids: stale.map((sample) => sample.id), status: 'dropped', reason: 'stale', at: options.now() });
      samplesDroppedStale += stale.length;
      logger.info('dropped stale samples', { count: stale.length, newestVersion: newest, maxStaleness });
    }
    // An engine that trains only at temperature 1 would fail every step that claimed such a sample.
    const fresh = trainingEngine.capabilities.anyTemperature ? current : current.filter((sample) => sample.samplingTemperature === 1);
    if (fresh.length < current.length) {
      const untrainable = current.filter((sample) => !fresh.includes(sample));
      await store.updateSampleStatus({ ids: untrainable.map((sample) => sample.id), status: 'dropped', reason: 'temperature', at: options.now() });
      logger.warn('dropped samples drawn at a temperature the training engine cannot train (only 1)', { count: untrainable.length, engine: trainingEngine.engineId });
    }
    if (fresh.length === 0) return { kind: 'all-stale', samplesDropped: claimed.length };
    // Formed over every fresh sample, so each group's and the batch's baselines see all their members.
    const formed = advantagesOf(fresh, advantageOptions);
    const used = fresh.flatMap((sample, index) => (hasSignal(formed[index] as SampleAdvantages) ? [{ sample, advantages: formed[index] as SampleAdvantages }] : []));
    const zeroAdvantage = fresh.filter((_, index) => !hasSignal(formed[index] as SampleAdvantages));
    if (zeroAdvantage.length > 0) {
      await store.updateSampleStatus({ ids: zeroAdvantage.map((sample) => sample.id), status: 'dropped', reason: 'zero-advantage', at: options.now() });
      logger.info('dropped samples whose advantages are all zero', { count: zeroAdvantage.length });
    }
    if (used.length === 0) return { kind: 'no-signal', samplesDropped: claimed.length };
    training = true;
    const parent = lineage?.parent ?? trainingVersion;
    // Per user, the lineage's own engine: its weights and optimizer state are that user's alone.
    const engine = lineage?.engine ?? trainingEngine;
    logger.info('training step started', { samples: used.length, parent, ...(lineage === null ? {} : { user: lineage.user }) });
    try {
      const data = used.map(({ sample, advantages }) => datumOf(sample, advantages));
      const output = await engine.forwardBackward({ data, loss });
      const stepNumber = (summary.lastStep?.step ?? 0) + 1;
      const learningRate = decayedLearningRate(trainingEngine.info.learningRate, stepNumber, learningRateDecay);
      const optimizer = await engine.optimizerStep({ learningRate });
      const computed = policyLoss(lossInputsOf(data, output, proximalIsRollout), metricLoss);
      const mismatch = proximalIsRollout ? rolloutMismatchOf(data, output) : computed;
      const later = trainEpochs > 1 ? data.map((datum, index) => withProximalLogprobs(datum, output, index)) : [];
      let lastOutput: ForwardBackwardOutput | null = null;
      for (let pass = 2; pass <= trainEpochs; pass += 1) {
        lastOutput = await engine.forwardBackward({ data: later, loss });
        await engine.optimizerStep({ learningRate });
      }
      // Only the last pass's clip fraction is reported, so only its loss is worked out.
      const lastPass = lastOutput === null ? computed : policyLoss(lossInputsOf(later, lastOutput, proximalIsRollout), metricLoss);
      const version = newest + 1;
      const artifact = await engine.publishWeights(version);
      const checkpoint = await engine.saveState(`step-${stepNumber}`);
      const endedAt = options.now();
      const metrics: TrainingStepMetrics = {
        loss: output.loss,
        policyGradientLoss: computed.policyGradientLoss,
        clipFraction: lastPass.clipFraction,
        kl: computed.kl,
        ...(computed.anchorKl === null ? {} : { anchorKl: computed.anchorKl }),
        importanceRatio: mismatch.importanceRatio,
        rolloutLogprobAbsoluteDifference: mismatch.rolloutLogprobAbsoluteDifference,
        samplesUsed: used.length,
        samplesDropped: stale.length,
        samplesZeroAdvantage: zeroAdvantage.length,
        lossTokens: computed.lossTokens,
        gradientNorm: optimizer.gradientNorm,
        learningRate: optimizer.learningRate,
        ...(trainEpochs > 1 ? { epochs: trainEpochs } : {}),
        stepMs: endedAt - startedAt,
      };
      const record = await store.commitTrainingStep({
        ...(lifecycle === null ? {} : { state: 'candidate' as const }),
        workerId: options.workerId,
        step: { step: stepNumber, policyVersion: version, trainedSampleIds: used.map(({ sample }) => sample.id), metrics, checkpoint, startedAt, endedAt },
        version: {
          version, parent, kind: artifact.kind, files: artifact.files, step: stepNumber, samples: used.length, metrics, createdAt: endedAt,
          ...(lineage === null ? {} : { user: lineage.user }),
        },
      });
      lineages?.trained(lineage?.user ?? null, version);
      // A user's step leaves the global lineage where it was: what the follower compares with the store's active version.
      if (lineage === null || lineage.user === null) {
        trainingVersion = version;
        lastCheckpoint = checkpoint;
      }
      logger.info('training step committed', { step: stepNumber, version, loss: metrics.loss, samples: used.length, stepMs: metrics.stepMs, ...(lineage === null ? {} : { user: lineage.user }) });
      // A user's version serves that user's requests (the gateway routes them to it); only the global lineage's becomes what the engine serves by default.
      if (lineage !== null && lineage.user !== null) {
        options.onUserLineageChange?.();
        return { kind: 'trained', step: record, samplesDropped: stale.length };
      }
      if (lifecycle !== null) {
        const incumbent = summary.activeVersion ?? 0;
        evaluating = version;
        void lifecycle
          .submit(artifact, incumbent)
          .then((outcome) => settle(outcome, incumbent))
          .catch((error: unknown) => logger.error('the evaluation of the new policy version failed', { version, error: String(error) }));
        return { kind: 'trained', step: record, samplesDropped: stale.length };
      }
      try {
        await serving.serve(artifact);
      } catch (error) {
        logger.error('the engine could not load the new policy version; it keeps serving the previous one', { version, error: String(error) });
      }
      return { kind: 'trained', step: record, samplesDropped: stale.length };
    } catch (error) {
      failedSteps += 1;
      logger.error('training step failed; its samples stay ready', { error: String(error) });
      await store.releaseTrainingSamples({ workerId: options.workerId, ids: used.map(({ sample }) => sample.id) }).catch(() => undefined);
      await restoreTrainingWeights(lineage).catch((restoreError: unknown) => logger.error('restoring the training weights failed', { error: String(restoreError) }));
      throw error;
    } finally {
      training = false;
    }
  }

  /** The user owning `version` (null: the global lineage); `not_found` for an unknown version. */
  async function ownerOf(version: PolicyVersion): Promise<string | null> {
    const record = (await store.listPolicyVersions()).find((entry) => entry.version === version);
    if (record === undefined) throw new ClawrlError('not_found', `No policy version ${version}.`, { param: 'version' });
    return record.user;
  }

  /** Steps run one at a time, in call order. */
  function enqueue<Result>(work: () => Promise<Result>): Promise<Result> {
    const next = chain.then(work, work);
    chain = next.catch(() => undefined);
    return next;
  }

  async function poll(): Promise<void> {
    if (paused || closed || training || evaluating !== null) return;
    try {
      const ready = (await store.counts()).judging.samples.ready;
      if (ready >= trainEvery) await enqueue(() => step(trainEvery));
    } catch (error) {
      logger.error('automatic training step failed', { error: String(error) });
    }
  }

  return {
    async start() {
      // Leases this trainer held before a crash or restart end now, not when they expire.
      await store.releaseTrainingSamples({ workerId: options.workerId });
      const summary = await store.trainingSummary();
      const active = summary.activeVersion ?? 0;
      const last = summary.lastStep;
      if (last !== null && last.policyVersion === active && last.checkpoint !== null) {
        try {
          await trainingEngine.loadState(last.checkpoint);
          lastCheckpoint = last.checkpoint;
          logger.info('trainer resumed from its checkpoint', { step: last.step, version: active });
        } catch (error) {
          logger.warn('cannot load the last checkpoint; continuing from the served weights with fresh optimizer state', { error: String(error) });
          await continueFrom(active);
        }
      } else if (active !== 0) {
        await continueFrom(active);
      }
      trainingVersion = active;
      timer = setInterval(() => void poll(), pollIntervalMs);
      timer.unref();
    },
    trainNow() {
      if (closed) return Promise.reject(new ClawrlError('invalid_request', 'The trainer is closed.'));
      if (paused) return Promise.reject(new ClawrlError('invalid_request', 'Training is paused; resume it first (POST /admin/training/resume).'));
      if (evaluating !== null) {
        return Promise.reject(new ClawrlError('invalid_request', `Version ${evaluating} is being evaluated (gate or canary); training waits for its outcome.`));
      }
      // A step whose samples changed under it (a later judgement superseded one) trains again on what is ready now.
      return enqueue(() =>
        step(1).catch((error: unknown) => {
          if (ClawrlError.isInstance(error) && error.code === 'store_error' && error.retryable) return step(1);
          throw error;
        }),
      );
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
    },
    activate(version, reason) {
      return enqueue(async () => {
        const owner = lineages === null ? null : await ownerOf(version);
        if (owner !== null) {
          // A user's version: recorded as that lineage's active one; the user's next request is served it and its
          // next step continues from it (the lineage moves there then, its latest state being another version).
          await store.activatePolicyVersion(version, options.now(), reason === undefined ? {} : { reason });
          options.onUserLineageChange?.();
          return;
        }
        // Training weights first: a version the trainer cannot continue from changes nothing.
        await trainingEngine.resetWeights(await serving.artifactOf(version));
        try {
          await serving.activate(version, reason);
        } catch (error) {
          await restoreTrainingWeights();
          throw error;
        }
        await lifecycle?.interrupt(version);
        trainingVersion = version;
        lastCheckpoint = null;
        lineages?.trained(null, version);
      });
    },
    status: () => ({ paused, training, trainingVersion, samplesDroppedStale, failedSteps, trainEvery, evaluating }),
    async close() {
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      lifecycle?.close();
      await chain;
    },
  };
}
