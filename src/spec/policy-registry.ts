/**
 * The `PolicyRegistry` role of the record store: the policy versions with their artifacts and
 * which one serving uses — what policy serving records, activates and loads. A `RecordStore`
 * plays it; a training step's commit (`training-queue.ts`) adds versions too.
 *
 * Policy versions are immutable; which one serving uses is the latest activation, so a rollback
 * is just another activation. Each version also has a lifecycle state (`policy-version-state.ts`):
 * exactly the latest activation is `active`; activating a version moves the one it replaces to
 * `retired` ("superseded by version N") when the new one is newer, to `rolled-back` ("rolled back
 * to version N") when it is older.
 *
 * Versions form lineages: the global one (versions owning no user) and, with `--policy-scope user`,
 * one per user (`NewPolicyVersion.user`). Version numbers are unique across all of them, and each
 * lineage has its own active version: activating a user's version replaces only that user's.
 */
import type { PolicyVersion } from './inference-engine.js';
import type { PolicyVersionState, SetPolicyVersionStateOptions } from './policy-version-state.js';
import type { NewPolicyVersion, PolicyArtifactKind, PolicyVersionRecord, TrainingStepRecord } from './records.js';

/**
 * Where training stands, for `/admin/status` and a trainer resuming after a restart: of the global
 * lineage's activations, with the steps and versions of all lineages; or, asked for one lineage
 * (`{ user }`), of that lineage alone.
 */
export interface TrainingSummary {
  steps: number;
  lastStep: TrainingStepRecord | null;
  /** The version serving should use; null before any version is recorded. */
  activeVersion: PolicyVersion | null;
  /** The highest recorded version; null before any. */
  latestVersion: PolicyVersion | null;
}

export interface PolicyRegistry {
  /**
   * Records a policy version that no step produced (the base, version 0) and, with `activate`,
   * activates it (state `active`); without, it is a `candidate`. Fails with `store_error` for an
   * existing version.
   */
  recordPolicyVersion(version: NewPolicyVersion, options: { activate: boolean }): Promise<PolicyVersionRecord>;
  /**
   * Makes `version` the one serving uses (state `active`, with `reason`, default "activated");
   * false, changing nothing, for an unknown version.
   */
  activatePolicyVersion(version: PolicyVersion, at: number, options?: { reason?: string }): Promise<boolean>;
  /**
   * Moves a version to `state` with the reason and, when given, its gate or canary evidence;
   * false, changing nothing, for an unknown version. `active` is an activation (as
   * `activatePolicyVersion`). The active version cannot leave `active` this way (`invalid_request`):
   * activate its successor first, so serving always has a version.
   */
  setPolicyVersionState(version: PolicyVersion, state: PolicyVersionState, options: SetPolicyVersionStateOptions): Promise<boolean>;
  /** Every version, ascending (the base first); with `user`, that lineage's alone (null: the global lineage's). */
  listPolicyVersions(options?: LineageOptions): Promise<PolicyVersionRecord[]>;
  /** A version's artifact; null for an unknown version. */
  getPolicyArtifact(version: PolicyVersion): Promise<{ kind: PolicyArtifactKind; files: Record<string, Uint8Array> } | null>;
  trainingSummary(options?: LineageOptions): Promise<TrainingSummary>;
}

/** One lineage: a user's (`tenant/name`), or null for the global one; absent, all of them. */
export interface LineageOptions {
  user?: string | null;
}
