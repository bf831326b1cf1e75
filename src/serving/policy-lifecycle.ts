/**
 * A version earns its users (docs/training.md, "Versions earn their users"). A version the trainer
 * commits is a `candidate`; with `gate: 'replay'` the replay gate evaluates it beside serving
 * (`replay-gate.ts`) and rejects it or lets it on; with a `canaryShare` above 0 it then serves that
 * share of sessions (by a hash of the session id) while the canary watch compares them with the
 * incumbent's (`canary-watch.ts`), rolls it back on a regression or, after the canary's length,
 * activates it. With neither, the version is active at once (`--gate none --canary-share 0`).
 *
 * The candidate is staged on the engine (`InferenceEngine.stagePolicy`): only the gate's requests
 * and the canary cohort's name it; nobody else is routed to it before it is active. A rollback
 * only stops routing: requests in flight finish on the version they started with, and the staged
 * version stays loaded for them. One version is evaluated at a time; a person's activation ends the
 * evaluation (`interrupt`).
 *
 * In a distributed deployment the trainer runs the lifecycle and the gateways follow the store
 * (`createCanaryFollower`): a canary's state carries its evidence from the start, whose `share`
 * with the session hash names the cohort every gateway routes alike, and `announce` tells them
 * when routing changes (the canary starts or is rolled back) rather than on their next store check.
 */
import { defaultCanaryWatchRule, type CanaryWatchRuleOptions } from '../core/canary-watch-rule.js';
import { inSessionCohort } from '../core/session-cohort.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { InferenceEngine, PolicyArtifact, PolicyVersion } from '../spec/inference-engine.js';
import type { Logger } from '../spec/logger.js';
import type { PolicyRegistry } from '../spec/policy-registry.js';
import type { PolicyCanaryEvidence, PolicyGateEvidence } from '../spec/policy-version-state.js';
import type { RecordReads } from '../spec/record-reads.js';
import { createCanaryWatch } from './canary-watch.js';
import type { PolicyServing } from './policy-serving.js';
import { runReplayGate, type ReplayGateOptions } from './replay-gate.js';

export interface PolicyLifecycleOptions {
  store: PolicyRegistry & Pick<RecordReads, 'listSessions' | 'getTurns' | 'listTurnIds' | 'dashboard'>;
  serving: PolicyServing;
  /** Where the candidate is staged and the gate samples; null without a gate in a process that serves nothing (the trainer of a distributed deployment). */
  engine: InferenceEngine | null;
  logger: Logger;
  now: () => number;
  gate: 'replay' | 'none';
  /** The replay gate's judge, held-out share, rule and size; required with `gate: 'replay'`. */
  replay: Omit<ReplayGateOptions, 'store' | 'engine' | 'now'> | null;
  /** The share of sessions served a candidate before it is active (0..1); 0: no canary. */
  canaryShare: number;
  canary?: CanaryWatchRuleOptions;
  /** How often the canary watch reads the store; default 2 s. */
  watchIntervalMs?: number;
  /**
   * The engine serves nobody (the trainer's gate engine of a distributed deployment): the incumbent
   * is staged beside the candidate, since the engine's own served version is not the incumbent.
   */
  stageIncumbent?: boolean;
  /** Tells the other processes that `version`'s routing changed (distributed: `policy-published`). */
  announce?: (version: PolicyVersion) => Promise<void>;
}

export type LifecycleOutcome =
  | { kind: 'active'; version: PolicyVersion; reason: string }
  | { kind: 'rejected' | 'rolled-back'; version: PolicyVersion; reason: string }
  /** A person activated a version while this one was evaluated. */
  | { kind: 'interrupted'; version: PolicyVersion; activated: PolicyVersion };

export interface PolicyLifecycle {
  /** Whether committed versions wait for the gate or a canary; false is `--gate none --canary-share 0`. */
  readonly gated: boolean;
  /** Ends what a restart interrupted: candidates and canaries left from before are rejected or rolled back. */
  start(): Promise<void>;
  /** The version being evaluated; null when none is. */
  pending(): PolicyVersion | null;
  /** The version that serves while one is evaluated (what a rollback returns to); null when none is evaluated. */
  incumbent(): PolicyVersion | null;
  /** Whether a canary routes any session now. */
  routing(): boolean;
  /** The version a session is served while a canary runs; undefined for the served version. */
  versionFor(sessionId: string): PolicyVersion | undefined;
  /** Runs a committed candidate through the gate and the canary to its outcome. */
  submit(candidate: PolicyArtifact, incumbent: PolicyVersion): Promise<LifecycleOutcome>;
  /** A person activated `activated`: the evaluation ends (the activated version, if it is the candidate, is simply active). */
  interrupt(activated: PolicyVersion): Promise<void>;
  close(): void;
}

interface Evaluation {
  candidate: PolicyVersion;
  incumbent: PolicyVersion;
  abort: AbortController;
  /** Set while a canary routes its cohort. */
  canary: { share: number } | null;
  interruptedBy: PolicyVersion | null;
  wake: (() => void) | null;
}

export function createPolicyLifecycle(options: PolicyLifecycleOptions): PolicyLifecycle {
  const { store, serving, engine, logger } = options;
  const gated = options.gate === 'replay' || options.canaryShare > 0;
  const canaryRule = options.canary ?? defaultCanaryWatchRule;
  const watchIntervalMs = options.watchIntervalMs ?? 2_000;
  if (options.canaryShare < 0 || options.canaryShare > 1) throw new ClawrlError('configuration_error', `--canary-share must be within 0..1, got ${options.canaryShare}`);
  if (options.gate === 'replay' && options.replay === null) throw new ClawrlError('configuration_error', 'the replay gate needs a judge');
  // A gate without an engine would let every candidate on unreplayed.
  if (options.gate === 'replay' && engine === null) throw new ClawrlError('configuration_error', 'the replay gate needs an engine to sample the candidate on');
  let current: Evaluation | null = null;
  let closed = false;

  const at = () => options.now();
  /** Best effort: the gateways also read the store on a timer. */
  const announce = async (version: PolicyVersion): Promise<void> => {
    await options.announce?.(version).catch((error: unknown) => logger.warn('announcing the canary routing failed', { version, error: String(error) }));
  };
  const sleep = (evaluation: Evaluation) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        evaluation.wake = null;
        resolve();
      }, watchIntervalMs);
      evaluation.wake = () => {
        clearTimeout(timer);
        evaluation.wake = null;
        resolve();
      };
    });

  async function stage(candidate: PolicyArtifact): Promise<void> {
    if (engine === null) return;
    if (engine.stagePolicy === undefined) {
      throw new ClawrlError('unsupported', `the ${engine.engineId} engine cannot evaluate a version beside serving; use --gate none --canary-share 0`);
    }
    await engine.stagePolicy(candidate);
  }

  async function stageVersions(evaluation: Evaluation, candidate: PolicyArtifact): Promise<void> {
    await stage(candidate);
    if (options.stageIncumbent === true) await stage(await serving.artifactOf(evaluation.incumbent));
  }

  async function runGate(evaluation: Evaluation): Promise<PolicyGateEvidence | null> {
    if (options.gate !== 'replay' || options.replay === null || engine === null) return null;
    const replay: ReplayGateOptions = { ...options.replay, store, engine, now: options.now };
    return runReplayGate(replay, { candidate: evaluation.candidate, incumbent: evaluation.incumbent, signal: evaluation.abort.signal });
  }

  /** Serves the cohort until the watch decides or a person interrupts. */
  async function runCanary(evaluation: Evaluation, gate: PolicyGateEvidence | null, gateReason: string): Promise<PolicyCanaryEvidence | null> {
    const startedAt = at();
    const reason = `${gateReason}; serving ${options.canaryShare} of sessions`;
    const watch = createCanaryWatch({ store, candidate: evaluation.candidate, incumbent: evaluation.incumbent, share: options.canaryShare, rule: canaryRule, startedAt, now: options.now });
    // Stored from the start: the share in the evidence is what the gateways of a distributed deployment route by.
    const started = await watch.check();
    await store.setPolicyVersionState(evaluation.candidate, 'canary', { reason, at: startedAt, canary: started, ...(gate === null ? {} : { gate }) });
    evaluation.canary = { share: options.canaryShare };
    logger.info('canary started', { version: evaluation.candidate, incumbent: evaluation.incumbent, share: options.canaryShare });
    await announce(evaluation.candidate);
    for (;;) {
      await sleep(evaluation);
      if (evaluation.interruptedBy !== null || closed) return null;
      const evidence = await watch.check().catch((error: unknown) => {
        logger.warn('the canary watch could not read the store; trying again', { error: String(error) });
        return null;
      });
      if (evidence === null || evidence.decision === 'watching') continue;
      if (evidence.decision === 'roll-back') evaluation.canary = null;
      return evidence;
    }
  }

  async function evaluate(evaluation: Evaluation, artifact: PolicyArtifact): Promise<LifecycleOutcome> {
    const version = evaluation.candidate;
    const interrupted = (): LifecycleOutcome | null =>
      evaluation.interruptedBy === null ? null : { kind: 'interrupted', version, activated: evaluation.interruptedBy };
    try {
      await stageVersions(evaluation, artifact);
      const gate = await runGate(evaluation);
      if (interrupted() !== null) return interrupted() as LifecycleOutcome;
      if (gate !== null) {
        logger.info('replay gate decided', { version, decision: gate.decision, wins: gate.wins, losses: gate.losses, ties: gate.ties, pValue: gate.pValue });
        if (gate.decision === 'reject') {
          const reason = `rejected by the replay gate: ${gate.reason}`;
          await store.setPolicyVersionState(version, 'rejected', { reason, at: at(), gate });
          return { kind: 'rejected', version, reason };
        }
      }
      let reason = gate === null ? 'no gate configured' : `passed the replay gate: ${gate.reason}`;
      if (options.canaryShare > 0) {
        const canary = await runCanary(evaluation, gate, reason);
        if (canary === null) return interrupted() ?? { kind: 'rolled-back', version, reason: 'the server closed during the canary' };
        if (canary.decision === 'roll-back') {
          const rolledBack = `rolled back by the canary watch: ${canary.reason}`;
          await store.setPolicyVersionState(version, 'rolled-back', { reason: rolledBack, at: at(), canary });
          logger.warn('canary rolled back', { version, reason: canary.reason });
          await announce(version);
          return { kind: 'rolled-back', version, reason: rolledBack };
        }
        await store.setPolicyVersionState(version, 'canary', { reason: canary.reason, at: at(), canary });
        reason = `promoted by the canary watch: ${canary.reason}`;
      } else if (gate !== null) {
        await store.setPolicyVersionState(version, 'candidate', { reason, at: at(), gate });
      }
      await serving.activate(version, reason);
      return { kind: 'active', version, reason };
    } catch (error) {
      if (interrupted() !== null) return interrupted() as LifecycleOutcome;
      const reason = `the evaluation failed: ${error instanceof Error ? error.message : String(error)}`;
      logger.error('policy version evaluation failed; the incumbent stays', { version, error: reason });
      const routed = evaluation.canary !== null;
      await store.setPolicyVersionState(version, routed ? 'rolled-back' : 'rejected', { reason, at: at() }).catch(() => undefined);
      if (routed) await announce(version);
      return { kind: 'rejected', version, reason };
    } finally {
      evaluation.canary = null;
    }
  }

  return {
    gated,
    async start() {
      if (gated && engine !== null && engine.stagePolicy === undefined) {
        throw new ClawrlError('configuration_error', `the ${engine.engineId} engine cannot evaluate a version beside serving (--gate replay, --canary-share): use --gate none --canary-share 0`);
      }
      const summary = await store.trainingSummary();
      for (const record of await store.listPolicyVersions()) {
        if (record.active || (record.state !== 'candidate' && record.state !== 'canary')) continue;
        const state = record.state === 'canary' ? 'rolled-back' : 'rejected';
        await store.setPolicyVersionState(record.version, state, { reason: `its evaluation was interrupted by a restart (version ${summary.activeVersion ?? 0} served)`, at: at() });
      }
    },
    pending: () => current?.candidate ?? null,
    incumbent: () => current?.incumbent ?? null,
    routing: () => current?.canary != null,
    versionFor(sessionId) {
      const evaluation = current;
      if (evaluation?.canary == null) return undefined;
      return inSessionCohort('canary', sessionId, evaluation.canary.share) ? evaluation.candidate : undefined;
    },
    async submit(candidate, incumbent) {
      if (current !== null) throw new ClawrlError('invalid_request', `version ${current.candidate} is still being evaluated`);
      const evaluation: Evaluation = { candidate: candidate.version, incumbent, abort: new AbortController(), canary: null, interruptedBy: null, wake: null };
      current = evaluation;
      try {
        return await evaluate(evaluation, candidate);
      } finally {
        if (current === evaluation) current = null;
      }
    },
    async interrupt(activated) {
      const evaluation = current;
      if (evaluation === null || evaluation.interruptedBy !== null) return;
      evaluation.interruptedBy = activated;
      evaluation.canary = null;
      evaluation.abort.abort(new ClawrlError('invalid_request', `a person activated version ${activated}`));
      evaluation.wake?.();
      if (activated === evaluation.candidate) return;
      const records = await store.listPolicyVersions();
      const state = records.find((record) => record.version === evaluation.candidate)?.state;
      if (state === 'candidate' || state === 'canary') {
        await store.setPolicyVersionState(evaluation.candidate, state === 'canary' ? 'rolled-back' : 'rejected', {
          reason: `a person activated version ${activated} during its ${state === 'canary' ? 'canary' : 'gate'}`,
          at: at(),
        });
        if (state === 'canary') await announce(evaluation.candidate);
      }
    },
    close() {
      closed = true;
      current?.abort.abort();
      current?.wake?.();
    },
  };
}
