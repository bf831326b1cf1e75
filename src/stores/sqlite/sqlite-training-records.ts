/**
 * The training half of the SQLite record store (migration 3): sample leases for the trainer,
 * policy versions with their artifact files, activations and training steps. A claim takes rollout
 * groups whole (migration 9), past its limit if need be, so no step sees part of a group. The store delegates
 * to it and lends it a reader for sample records, so sample reconstruction lives in one place.
 *
 * Every method runs synchronously inside the store's `#run` wrapper; writes that touch more than
 * one row run in one IMMEDIATE transaction.
 */
import type Database from 'better-sqlite3';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { samplesGoneError } from '../samples-gone-error.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';
import type { LineageOptions, TrainingSummary } from '../../spec/policy-registry.js';
import type { ClaimSamplesOptions, CommitTrainingStepOptions, ReadySamplesOfUser } from '../../spec/training-queue.js';
import { logprobTemperatureOf } from '../../core/logprob-temperature.js';
import type { SamplingOptions } from '../../spec/chat.js';
import type {
  NewPolicyVersion,
  PolicyArtifactKind,
  PolicyVersionRecord,
  SampleRecord,
  TrainingSample,
  TrainingStepRecord,
} from '../../spec/records.js';
import type { PolicyVersionState, SetPolicyVersionStateOptions } from '../../spec/policy-version-state.js';
import { checkStateChange, defaultActivationReason, replacedVersionState } from '../policy-state-change.js';
import { toPolicyVersionRecord, toTrainingStepRecord, type PolicyVersionRow, type TrainingStepRow } from '../record-rows.js';



// A version is active when it is its lineage's latest activation (`IS` matches the global lineage's nulls).
const versionColumns = `version, parent, kind, step, samples, metrics, bytes, created_at, state, state_reason, state_changed_at, gate, canary, user_id,
  (version = (SELECT activation.version FROM policy_activations AS activation WHERE activation.user_id IS policy_versions.user_id
    ORDER BY activation.id DESC LIMIT 1)) AS active`;

/** `@any` 1 matches every user; else `user_id IS @user` (null: no user). */
const userFilter = '(@any = 1 OR user_id IS @user)';

function userParameters(options: LineageOptions): { any: number; user: string | null } {
  return options.user === undefined ? { any: 1, user: null } : { any: 0, user: options.user };
}

function statements(database: Database.Database) {
  return {
    // The oldest `limit` claimable samples, and every other claimable sample of their rollout groups.
    selectClaimable: database.prepare<{ now: number; limit: number; any: number; user: string | null }, { id: string; turn_id: string; sampling: string }>(`
      WITH due AS (
        SELECT ordinal, rollout_group FROM samples
        WHERE status = 'ready' AND (lease_expires_at IS NULL OR lease_expires_at <= @now) AND ${userFilter}
        ORDER BY ordinal LIMIT @limit
      )
      SELECT sample.id, turn.id AS turn_id, turn.sampling
      FROM samples AS sample
      JOIN turns AS turn ON turn.ordinal = sample.turn_ordinal
      WHERE sample.status = 'ready' AND (sample.lease_expires_at IS NULL OR sample.lease_expires_at <= @now)
        AND (@any = 1 OR sample.user_id IS @user)
        AND (sample.ordinal IN (SELECT ordinal FROM due)
          OR sample.rollout_group IN (SELECT rollout_group FROM due WHERE rollout_group IS NOT NULL))
      ORDER BY sample.ordinal
    `),
    readyByUser: database.prepare<[number], { user: string | null; ready: number }>(`
      SELECT user_id AS user, count(*) AS ready FROM samples
      WHERE status = 'ready' AND (lease_expires_at IS NULL OR lease_expires_at <= ?)
      GROUP BY user_id ORDER BY user_id NULLS FIRST
    `),
    lease: database.prepare<[string, number, string]>('UPDATE samples SET lease_owner = ?, lease_expires_at = ? WHERE id = ?'),
    releaseOne: database.prepare<[string, string]>(
      'UPDATE samples SET lease_owner = NULL, lease_expires_at = NULL WHERE id = ? AND lease_owner = ?',
    ),
    releaseAll: database.prepare<[string]>('UPDATE samples SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = ?'),
    markTrained: database.prepare<[number, number, string]>(`
      UPDATE samples SET status = 'trained', training_step = ?, updated_at = ?, lease_owner = NULL, lease_expires_at = NULL
      WHERE id = ? AND status = 'ready'
    `),
    selectVersion: database.prepare<[number], PolicyVersionRow>(`SELECT ${versionColumns} FROM policy_versions WHERE version = ?`),
    listVersions: database.prepare<{ any: number; user: string | null }, PolicyVersionRow>(
      `SELECT ${versionColumns} FROM policy_versions WHERE ${userFilter} ORDER BY version`,
    ),
    insertVersion: database.prepare<Omit<PolicyVersionRow, 'active' | 'state_changed_at' | 'gate' | 'canary'>>(`
      INSERT INTO policy_versions (version, parent, kind, step, samples, metrics, bytes, created_at, state, state_reason, state_changed_at, user_id)
      VALUES (@version, @parent, @kind, @step, @samples, @metrics, @bytes, @created_at, @state, @state_reason, @created_at, @user_id)
    `),
    setState: database.prepare<{ version: number; state: string; reason: string; at: number; gate: string | null; canary: string | null }>(`
      UPDATE policy_versions SET state = @state, state_reason = @reason, state_changed_at = @at,
        gate = coalesce(@gate, gate), canary = coalesce(@canary, canary)
      WHERE version = @version
    `),
    activeVersion: database.prepare<[string | null], { version: number }>('SELECT version FROM policy_activations WHERE user_id IS ? ORDER BY id DESC LIMIT 1'),
    ownerOf: database.prepare<[number], { user_id: string | null }>('SELECT user_id FROM policy_versions WHERE version = ?'),
    insertFile: database.prepare<[number, string, Uint8Array]>('INSERT INTO policy_files (version, name, bytes) VALUES (?, ?, ?)'),
    selectFiles: database.prepare<[number], { name: string; bytes: Buffer }>('SELECT name, bytes FROM policy_files WHERE version = ? ORDER BY name'),
    activate: database.prepare<[number, number, string | null]>('INSERT INTO policy_activations (version, activated_at, user_id) VALUES (?, ?, ?)'),
    selectStep: database.prepare<[number], TrainingStepRow>('SELECT * FROM training_steps WHERE step = ?'),
    insertStep: database.prepare<TrainingStepRow>(`
      INSERT INTO training_steps (step, policy_version, samples_used, metrics, checkpoint, started_at, ended_at)
      VALUES (@step, @policy_version, @samples_used, @metrics, @checkpoint, @started_at, @ended_at)
    `),
    listSteps: database.prepare<[number, number], TrainingStepRow>('SELECT * FROM training_steps ORDER BY step DESC LIMIT ? OFFSET ?'),
    summary: database.prepare<[], { steps: number; active: number | null; latest: number | null }>(`
      SELECT (SELECT count(*) FROM training_steps) AS steps,
        (SELECT version FROM policy_activations WHERE user_id IS NULL ORDER BY id DESC LIMIT 1) AS active,
        (SELECT max(version) FROM policy_versions) AS latest
    `),
    lineageSummary: database.prepare<{ user: string | null }, { steps: number; active: number | null; latest: number | null }>(`
      SELECT (SELECT count(*) FROM training_steps AS step JOIN policy_versions AS version ON version.version = step.policy_version
          WHERE version.user_id IS @user) AS steps,
        (SELECT version FROM policy_activations WHERE user_id IS @user ORDER BY id DESC LIMIT 1) AS active,
        (SELECT max(version) FROM policy_versions WHERE user_id IS @user) AS latest
    `),
    lastLineageStep: database.prepare<[string | null], TrainingStepRow>(`
      SELECT step.* FROM training_steps AS step JOIN policy_versions AS version ON version.version = step.policy_version
      WHERE version.user_id IS ? ORDER BY step.step DESC LIMIT 1
    `),
    sessionVersion: database.prepare<[string], { policy_version: number }>(
      'SELECT policy_version FROM turns WHERE session_id = ? ORDER BY ordinal LIMIT 1',
    ),
  };
}



function checkVersion(version: NewPolicyVersion): void {
  if (!Number.isInteger(version.version) || version.version < 0) {
    throw new ClawrlError('store_error', `policy version must be a non-negative integer, got ${version.version}`);
  }
}

export class SqliteTrainingRecords {
  readonly #statements: ReturnType<typeof statements>;
  readonly #readySampleOfTurn: (turnId: string) => SampleRecord | null;
  readonly #claim: Database.Transaction<(options: ClaimSamplesOptions) => TrainingSample[]>;
  readonly #insertVersion: Database.Transaction<(version: NewPolicyVersion, activate: boolean) => void>;
  readonly #commit: Database.Transaction<(options: CommitTrainingStepOptions) => void>;
  readonly #setState: Database.Transaction<(version: PolicyVersion, state: PolicyVersionState, options: SetPolicyVersionStateOptions) => boolean>;

  constructor(database: Database.Database, readySampleOfTurn: (turnId: string) => SampleRecord | null) {
    this.#statements = statements(database);
    this.#readySampleOfTurn = readySampleOfTurn;
    this.#claim = database.transaction((options) => this.#claimDue(options));
    this.#insertVersion = database.transaction((version, activate) => this.#storeVersion(version, activate));
    this.#setState = database.transaction((version, state, options) => this.#changeState(version, state, options));
    this.#commit = database.transaction((options) => {
      const { step, version } = options;
      if (step.policyVersion !== version.version) {
        throw new ClawrlError('store_error', `step ${step.step} names version ${step.policyVersion} but publishes ${version.version}`);
      }
      if (this.#statements.selectStep.get(step.step) !== undefined) {
        throw new ClawrlError('store_error', `training step ${step.step} is already recorded`);
      }
      this.#storeVersion(version, (options.state ?? 'active') === 'active');
      const ids = new Set(step.trainedSampleIds);
      const marked = [...ids].reduce((count, id) => count + this.#statements.markTrained.run(step.step, step.endedAt, id).changes, 0);
      if (marked !== ids.size) throw samplesGoneError(step.step, ids.size - marked);
      this.#statements.insertStep.run({
        step: step.step,
        policy_version: step.policyVersion,
        samples_used: step.trainedSampleIds.length,
        metrics: JSON.stringify(step.metrics),
        checkpoint: step.checkpoint,
        started_at: step.startedAt,
        ended_at: step.endedAt,
      });
    });
  }

  readySamplesByUser(now: number): ReadySamplesOfUser[] {
    return this.#statements.readyByUser.all(now);
  }

  claimSamples(options: ClaimSamplesOptions): TrainingSample[] {
    if (!Number.isInteger(options.limit) || options.limit < 0) {
      throw new ClawrlError('invalid_request', `limit must be a non-negative integer, got ${options.limit}`, { param: 'limit' });
    }
    return this.#claim.immediate(options);
  }

  releaseSamples(input: { workerId: string; ids?: string[] }): number {
    if (input.ids === undefined) return this.#statements.releaseAll.run(input.workerId).changes;
    return input.ids.reduce((released, id) => released + this.#statements.releaseOne.run(id, input.workerId).changes, 0);
  }

  recordVersion(version: NewPolicyVersion, activate: boolean): PolicyVersionRecord {
    this.#insertVersion.immediate(version, activate);
    return this.#version(version.version);
  }

  commitStep(options: CommitTrainingStepOptions): TrainingStepRecord {
    this.#commit.immediate(options);
    const row = this.#statements.selectStep.get(options.step.step);
    if (row === undefined) throw new ClawrlError('store_error', `training step ${options.step.step} vanished after its commit`);
    return toTrainingStepRecord(row);
  }

  activate(version: PolicyVersion, at: number, reason = defaultActivationReason): boolean {
    return this.#setState.immediate(version, 'active', { reason, at });
  }

  setState(version: PolicyVersion, state: PolicyVersionState, options: SetPolicyVersionStateOptions): boolean {
    return this.#setState.immediate(version, state, options);
  }

  listVersions(options: LineageOptions): PolicyVersionRecord[] {
    return this.#statements.listVersions.all(userParameters(options)).map(toPolicyVersionRecord);
  }

  artifact(version: PolicyVersion): { kind: PolicyArtifactKind; files: Record<string, Uint8Array> } | null {
    const row = this.#statements.selectVersion.get(version);
    if (row === undefined) return null;
    const files: Record<string, Uint8Array> = {};
    for (const file of this.#statements.selectFiles.all(version)) files[file.name] = new Uint8Array(file.bytes);
    return { kind: row.kind, files };
  }

  listSteps(options: { limit?: number; offset?: number }): TrainingStepRecord[] {
    const limit = options.limit ?? 100;
    const offset = options.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 0 || !Number.isInteger(offset) || offset < 0) {
      throw new ClawrlError('invalid_request', 'limit and offset must be non-negative integers');
    }
    return this.#statements.listSteps.all(limit, offset).map(toTrainingStepRecord);
  }

  summary(options: LineageOptions): TrainingSummary {
    if (options.user !== undefined) {
      const lineage = this.#statements.lineageSummary.get({ user: options.user });
      if (lineage === undefined) throw new ClawrlError('store_error', 'training summary query returned no row');
      const lastOfLineage = this.#statements.lastLineageStep.get(options.user);
      return { steps: lineage.steps, lastStep: lastOfLineage === undefined ? null : toTrainingStepRecord(lastOfLineage), activeVersion: lineage.active, latestVersion: lineage.latest };
    }
    const row = this.#statements.summary.get();
    if (row === undefined) throw new ClawrlError('store_error', 'training summary query returned no row');
    const last = this.#statements.listSteps.get(1, 0);
    return { steps: row.steps, lastStep: last === undefined ? null : toTrainingStepRecord(last), activeVersion: row.active, latestVersion: row.latest };
  }

  sessionVersion(sessionId: string): PolicyVersion | null {
    return this.#statements.sessionVersion.get(sessionId)?.policy_version ?? null;
  }

  #version(version: PolicyVersion): PolicyVersionRecord {
    const row = this.#statements.selectVersion.get(version);
    if (row === undefined) throw new ClawrlError('store_error', `policy version ${version} vanished after its insert`);
    return toPolicyVersionRecord(row);
  }

  /** Runs inside a transaction: an activation also moves the version it replaces out of `active`. */
  #changeState(version: PolicyVersion, state: PolicyVersionState, options: SetPolicyVersionStateOptions): boolean {
    const owner = this.#statements.ownerOf.get(version);
    if (owner === undefined) return false;
    const active = this.#statements.activeVersion.get(owner.user_id)?.version ?? null;
    checkStateChange(version, state, active);
    if (state === 'active') {
      if (active !== null && active !== version) {
        const replaced = replacedVersionState(active, version);
        this.#statements.setState.run({ version: active, state: replaced.state, reason: replaced.reason, at: options.at, gate: null, canary: null });
      }
      this.#statements.activate.run(version, options.at, owner.user_id);
    }
    this.#statements.setState.run({
      version,
      state,
      reason: options.reason,
      at: options.at,
      gate: options.gate === undefined ? null : JSON.stringify(options.gate),
      canary: options.canary === undefined ? null : JSON.stringify(options.canary),
    });
    return true;
  }

  #storeVersion(version: NewPolicyVersion, activate: boolean): void {
    checkVersion(version);
    if (this.#statements.selectVersion.get(version.version) !== undefined) {
      throw new ClawrlError('store_error', `policy version ${version.version} is already recorded`);
    }
    const files = Object.entries(version.files);
    this.#statements.insertVersion.run({
      version: version.version,
      parent: version.parent,
      kind: version.kind,
      step: version.step,
      samples: version.samples,
      metrics: version.metrics === null ? null : JSON.stringify(version.metrics),
      bytes: files.reduce((total, [, bytes]) => total + bytes.byteLength, 0),
      created_at: version.createdAt,
      state: 'candidate',
      state_reason: activate ? null : 'waiting for the gate',
      user_id: version.user ?? null,
    });
    for (const [name, bytes] of files) this.#statements.insertFile.run(version.version, name, bytes);
    if (activate) this.#changeState(version.version, 'active', { reason: defaultActivationReason, at: version.createdAt });
  }

  #claimDue(options: ClaimSamplesOptions): TrainingSample[] {
    const claimed: TrainingSample[] = [];
    for (const row of this.#statements.selectClaimable.all({ now: options.now, limit: options.limit, ...userParameters(options) })) {
      const sample = this.#readySampleOfTurn(row.turn_id);
      if (sample === null || sample.id !== row.id) throw new ClawrlError('store_error', `ready sample ${row.id} vanished while claiming`);
      this.#statements.lease.run(options.workerId, options.now + options.leaseMs, row.id);
      claimed.push({
        ...sample,
        samplingTemperature: logprobTemperatureOf(JSON.parse(row.sampling) as SamplingOptions),
      });
    }
    return claimed;
  }
}
