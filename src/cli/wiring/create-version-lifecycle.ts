/**
 * Builds the version lifecycle of `clawrl serve` and `clawrl trainer` from `--gate`,
 * `--canary-share` and their thresholds (`serving/policy-lifecycle.ts`; docs/training.md,
 * "Versions earn their users"). The gate judges with the judge the server runs (`--judge`), built
 * here beside the engine it samples on: the served one, or the trainer's own gate engine.
 */
import type { z } from 'zod';
import type { PolicyLifecycle } from '../../serving/policy-lifecycle.js';
import { createPolicyLifecycle } from '../../serving/policy-lifecycle.js';
import type { PolicyServing } from '../../serving/policy-serving.js';
import type { InferenceEngine, PolicyVersion } from '../../spec/inference-engine.js';
import type { Logger } from '../../spec/logger.js';
import type { RecordStore } from '../../spec/record-store.js';
import type { configurationSections } from '../configuration/configuration-schema.js';
import type { Resolved } from '../configuration/configuration.js';
import { createJudge, type JudgeConfiguration } from './create-judge.js';
import type { PolicyControl } from '../../gateway/policy-control.js';
import { runReplayGate } from '../../serving/replay-gate.js';

export type VersionLifecycleConfiguration = Resolved<z.infer<typeof configurationSections.versions>> & JudgeConfiguration;

export interface VersionLifecycleDependencies {
  store: RecordStore;
  engine: InferenceEngine;
  logger: Logger;
  now: () => number;
}

/** In the trainer of a distributed deployment: its gate engine (null without a gate) serves nobody, and routing changes are announced. */
export interface DistributedLifecycleDependencies extends Omit<VersionLifecycleDependencies, 'engine'> {
  engine: InferenceEngine | null;
  announce: (version: PolicyVersion) => Promise<void>;
}

/** The replay gate's rule and size from the configuration, shared by serving and `eval replay`. */
export function replayGateSettingsOf(configuration: VersionLifecycleConfiguration) {
  return {
    heldOutShare: configuration.heldOutShare,
    rule: { margin: configuration.gateMargin, alpha: configuration.gateAlpha, minTurns: configuration.gateMinTurns },
    sessions: configuration.gateSessions,
    maxTurns: configuration.gateMaxTurns,
    concurrency: configuration.gateConcurrency,
  };
}

/**
 * `POST /admin/policies/{version}/replay` (`clawrl eval replay`): the replay gate's evaluation of
 * `version` against `against` (default: the active version), with the version staged beside serving.
 */
export function manualReplayOf(configuration: VersionLifecycleConfiguration, dependencies: VersionLifecycleDependencies & { serving: PolicyServing }): PolicyControl['replay'] {
  const stage = dependencies.engine.stagePolicy?.bind(dependencies.engine);
  if (stage === undefined) return undefined;
  const judge = createJudge(configuration, dependencies.engine);
  return async (version, options) => {
    const against = options.against ?? (await dependencies.store.trainingSummary()).activeVersion ?? 0;
    for (const named of [version, against]) {
      if (named !== dependencies.serving.servedVersion) await stage(await dependencies.serving.artifactOf(named));
    }
    const settings = replayGateSettingsOf(configuration);
    return runReplayGate(
      { ...settings, store: dependencies.store, engine: dependencies.engine, judge, now: dependencies.now },
      { candidate: version, incumbent: against, ...(options.sessions === undefined ? {} : { sessions: options.sessions }) },
    );
  };
}

/** A factory: the lifecycle activates through the serving the trainer publishes with. */
export function versionLifecycleFactory(
  configuration: VersionLifecycleConfiguration,
  dependencies: VersionLifecycleDependencies | DistributedLifecycleDependencies,
): (serving: PolicyServing) => PolicyLifecycle {
  const { engine } = dependencies;
  const distributed = 'announce' in dependencies ? { stageIncumbent: true, announce: dependencies.announce } : {};
  return (serving) =>
    createPolicyLifecycle({
      store: dependencies.store,
      serving,
      engine,
      logger: dependencies.logger,
      now: dependencies.now,
      gate: configuration.gate,
      replay: configuration.gate === 'replay' ? { judge: createJudge(configuration, engine ?? undefined), ...replayGateSettingsOf(configuration) } : null,
      canaryShare: configuration.canaryShare,
      canary: { lengthTurns: configuration.canaryTurns, margin: configuration.canaryMargin, minScored: configuration.canaryMinScored },
      ...distributed,
    });
}
