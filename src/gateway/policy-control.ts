/**
 * What the policy admin routes may do to serving and training, as the composition root hands it to
 * the gateway (`GatewayContext.policies`): the gateway knows nothing of the trainer.
 */
import type { PolicyVersion } from '../spec/inference-engine.js';
import type { PolicyServingStatus } from '../spec/policy-serving-status.js';
import type { PolicyGateEvidence } from '../spec/policy-version-state.js';
import type { TrainingStepRecord } from '../spec/records.js';

/** What the admin routes may do to serving and training. */
export interface PolicyControl {
  /** Serves `version` from now on (and training continues from it), recording `reason`; `not_found` for an unknown one. */
  activate(version: PolicyVersion, reason?: string): Promise<void>;
  /** Null when training is off (`--no-train`, or an engine that cannot load versions). */
  readonly training: TrainingControl | null;
  /** Which version each engine of this process serves (the gateway's, and the judge's own), and what is pending. */
  servingStatus?(): PolicyServingStatus[];
  /**
   * The replay gate's evaluation of `version` against `against` (default: the active version) on
   * `sessions` held-out sessions, by hand (`clawrl eval replay`); it changes no state.
   */
  replay?(version: PolicyVersion, options: { against?: PolicyVersion; sessions?: number }): Promise<PolicyGateEvidence>;
}

export interface TrainingControl {
  pause(): void;
  resume(): void;
  trainNow(): Promise<
    | { kind: 'trained'; step: TrainingStepRecord; samplesDropped: number }
    | { kind: 'all-stale'; samplesDropped: number }
    | { kind: 'no-signal'; samplesDropped: number }
    | { kind: 'idle' }
  >;
  status(): { paused: boolean; training: boolean; trainingVersion: PolicyVersion; samplesDroppedStale: number; failedSteps: number; trainEvery: number };
}
