/**
 * The training half of the Postgres record store (migration 3): sample leases for the trainer,
 * policy versions with their artifact files, activations and training steps.
 *
 * Samples are claimed under a per-schema advisory lock with the lease set in the same statement,
 * so several trainers never take the same sample, and a claim takes rollout groups whole (migration
 * 8), past its limit if need be, so no step sees part of a group. A step commits in one
 * transaction; the primary keys on step and version make a second commit of either fail whole.
 */
import { logprobTemperatureOf } from '../../core/logprob-temperature.js';
import type { SamplingOptions } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { samplesGoneError } from '../samples-gone-error.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';
import type { LineageOptions, TrainingSummary } from '../../spec/policy-registry.js';
import type { ClaimSamplesOptions, CommitTrainingStepOptions, ReadySamplesOfUser } from '../../spec/training-queue.js';
import type {
  NewPolicyVersion,
  PolicyArtifactKind,
  PolicyVersionRecord,
  TrainingSample,
  TrainingStepRecord,
} from '../../spec/records.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { checkPaging } from './postgres-paging.js';
import type { PolicyVersionState, SetPolicyVersionStateOptions } from '../../spec/policy-version-state.js';
import { checkStateChange, defaultActivationReason, replacedVersionState } from '../policy-state-change.js';
import { toPolicyVersionRecord, toTrainingStepRecord, type PolicyVersionRow, type TrainingStepRow } from '../record-rows.js';
import { sampleSelectList, toSampleRecord, type PostgresSampleRow } from './postgres-sample-rows.js';



// The first key of the claim lock ('clas'); the second is the schema's hash, so stores in other
// schemas claim independently.
const claimLockNamespace = 0x636c6173;

/** A lineage's active version: its latest activation (`$n` names the user, null for the global lineage). */
const activeVersionOf = (parameter: string) =>
  `(SELECT version FROM policy_activations WHERE user_id IS NOT DISTINCT FROM ${parameter} ORDER BY id DESC LIMIT 1)`;
const selectVersions = `SELECT version, parent, kind, step, samples, metrics, bytes, created_at, state, state_reason, state_changed_at, gate, canary, user_id,
  coalesce(version = (SELECT activation.version FROM policy_activations AS activation
    WHERE activation.user_id IS NOT DISTINCT FROM policy_versions.user_id ORDER BY activation.id DESC LIMIT 1), false) AS active FROM policy_versions`;
const selectSteps = 'SELECT step, policy_version, samples_used, metrics, checkpoint, started_at, ended_at FROM training_steps';



export class PostgresTrainingRecords {
  readonly #database: PostgresDatabase;

  constructor(database: PostgresDatabase) {
    this.#database = database;
  }

  async claimSamples(options: ClaimSamplesOptions): Promise<TrainingSample[]> {
    if (!Number.isInteger(options.limit) || options.limit < 0) {
      throw new ClawrlError('invalid_request', `limit must be a non-negative integer, got ${options.limit}`, { param: 'limit' });
    }
    // Claims run one at a time per schema: a group's samples past the first `limit` are leased by
    // the same statement, and only a claim that cannot start before the last one committed is sure
    // to find a group either whole or already leased, never half taken by a concurrent trainer.
    const rows = await this.#database.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))', [claimLockNamespace]);
      const result = await client.query<PostgresSampleRow & { sampling: string }>(
        `WITH first AS (
           SELECT ordinal, rollout_group FROM samples
           WHERE status = 'ready' AND (lease_expires_at IS NULL OR lease_expires_at <= $1)
             AND ($5 OR user_id IS NOT DISTINCT FROM $6)
           ORDER BY ordinal LIMIT $2
         ), due AS (
           SELECT ordinal FROM first
           UNION
           SELECT ordinal FROM samples
           WHERE status = 'ready' AND (lease_expires_at IS NULL OR lease_expires_at <= $1)
             AND ($5 OR user_id IS NOT DISTINCT FROM $6)
             AND rollout_group IN (SELECT rollout_group FROM first WHERE rollout_group IS NOT NULL)
         )
         UPDATE samples AS sample SET lease_owner = $3, lease_expires_at = $1::bigint + $4::bigint
         FROM due, turns AS turn
         WHERE sample.ordinal = due.ordinal AND turn.ordinal = sample.turn_ordinal
         RETURNING ${sampleSelectList}, turn.sampling`,
        [options.now, options.limit, options.workerId, options.leaseMs, options.user === undefined, options.user ?? null],
      );
      return result.rows;
    });
    rows.sort((left, right) => left.ordinal - right.ordinal);
    return Promise.all(
      rows.map(async (row) => {
        const samplingTemperature = logprobTemperatureOf(JSON.parse(row.sampling) as SamplingOptions);
        return { ...(await toSampleRecord(this.#database, row)), samplingTemperature };
      }),
    );
  }

  async readySamplesByUser(now: number): Promise<ReadySamplesOfUser[]> {
    return this.#database.rows<ReadySamplesOfUser>(
      `SELECT user_id AS user, count(*)::integer AS ready FROM samples
       WHERE status = 'ready' AND (lease_expires_at IS NULL OR lease_expires_at <= $1)
       GROUP BY user_id ORDER BY user_id NULLS FIRST`,
      [now],
    );
  }

  async releaseSamples(input: { workerId: string; ids?: string[] }): Promise<number> {
    const result =
      input.ids === undefined
        ? await this.#database.query('UPDATE samples SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = $1', [
            input.workerId,
          ])
        : await this.#database.query(
            'UPDATE samples SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = $1 AND id = ANY($2::text[])',
            [input.workerId, input.ids],
          );
    return result.rowCount ?? 0;
  }

  async recordVersion(version: NewPolicyVersion, activate: boolean): Promise<PolicyVersionRecord> {
    await this.#database.transaction((client) => this.#storeVersion(client, version, activate));
    return this.#version(version.version);
  }

  async commitStep(options: CommitTrainingStepOptions): Promise<TrainingStepRecord> {
    const { step, version } = options;
    if (step.policyVersion !== version.version) {
      throw new ClawrlError('store_error', `step ${step.step} names version ${step.policyVersion} but publishes ${version.version}`);
    }
    await this.#database.transaction(async (client) => {
      const existing = await client.query('SELECT 1 FROM training_steps WHERE step = $1', [step.step]);
      if ((existing.rowCount ?? 0) > 0) throw new ClawrlError('store_error', `training step ${step.step} is already recorded`);
      await this.#storeVersion(client, version, (options.state ?? 'active') === 'active');
      const marked = await client.query(
        `UPDATE samples SET status = 'trained', training_step = $1, updated_at = $2, lease_owner = NULL, lease_expires_at = NULL
         WHERE id = ANY($3::text[]) AND status = 'ready'`,
        [step.step, step.endedAt, step.trainedSampleIds],
      );
      const missing = new Set(step.trainedSampleIds).size - (marked.rowCount ?? 0);
      if (missing > 0) throw samplesGoneError(step.step, missing);
      await client.query(
        `INSERT INTO training_steps (step, policy_version, samples_used, metrics, checkpoint, started_at, ended_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          step.step,
          step.policyVersion,
          step.trainedSampleIds.length,
          JSON.stringify(step.metrics),
          step.checkpoint,
          step.startedAt,
          step.endedAt,
        ],
      );
    });
    const [row] = await this.#database.rows<TrainingStepRow>(`${selectSteps} WHERE step = $1`, [step.step]);
    if (row === undefined) throw new ClawrlError('store_error', `training step ${step.step} vanished after its commit`);
    return toTrainingStepRecord(row);
  }

  async activate(version: PolicyVersion, at: number, reason = defaultActivationReason): Promise<boolean> {
    return this.setState(version, 'active', { reason, at });
  }

  async setState(version: PolicyVersion, state: PolicyVersionState, options: SetPolicyVersionStateOptions): Promise<boolean> {
    return this.#database.transaction((client) => this.#changeState(client, version, state, options));
  }

  /**
   * Runs inside the caller's transaction. The activations table is locked first, so two changes at
   * once cannot both read the same active version and leave two versions `active`.
   */
  async #changeState(client: Queryable, version: PolicyVersion, state: PolicyVersionState, options: SetPolicyVersionStateOptions): Promise<boolean> {
    await client.query('LOCK TABLE policy_activations IN EXCLUSIVE MODE');
    const known = await client.query<{ user_id: string | null }>('SELECT user_id FROM policy_versions WHERE version = $1', [version]);
    const owner = known.rows[0];
    if (owner === undefined) return false;
    const { rows } = await client.query<{ version: number | null }>(`SELECT ${activeVersionOf('$1::text')} AS version`, [owner.user_id]);
    const active = rows[0]?.version ?? null;
    checkStateChange(version, state, active);
    const update = `UPDATE policy_versions SET state = $2, state_reason = $3, state_changed_at = $4,
      gate = coalesce($5, gate), canary = coalesce($6, canary) WHERE version = $1`;
    if (state === 'active') {
      if (active !== null && active !== version) {
        const replaced = replacedVersionState(active, version);
        await client.query(update, [active, replaced.state, replaced.reason, options.at, null, null]);
      }
      await client.query('INSERT INTO policy_activations (version, activated_at, user_id) VALUES ($1, $2, $3)', [version, options.at, owner.user_id]);
    }
    await client.query(update, [
      version,
      state,
      options.reason,
      options.at,
      options.gate === undefined ? null : JSON.stringify(options.gate),
      options.canary === undefined ? null : JSON.stringify(options.canary),
    ]);
    return true;
  }

  async listVersions(options: LineageOptions): Promise<PolicyVersionRecord[]> {
    const rows = await this.#database.rows<PolicyVersionRow>(`${selectVersions} WHERE $1 OR user_id IS NOT DISTINCT FROM $2 ORDER BY version`, [
      options.user === undefined,
      options.user ?? null,
    ]);
    return rows.map(toPolicyVersionRecord);
  }

  async artifact(version: PolicyVersion): Promise<{ kind: PolicyArtifactKind; files: Record<string, Uint8Array> } | null> {
    const [row] = await this.#database.rows<{ kind: PolicyArtifactKind }>('SELECT kind FROM policy_versions WHERE version = $1', [version]);
    if (row === undefined) return null;
    const files: Record<string, Uint8Array> = {};
    const stored = await this.#database.rows<{ name: string; bytes: Buffer }>(
      'SELECT name, bytes FROM policy_files WHERE version = $1 ORDER BY name',
      [version],
    );
    for (const file of stored) files[file.name] = new Uint8Array(file.bytes);
    return { kind: row.kind, files };
  }

  async listSteps(options: { limit?: number; offset?: number }): Promise<TrainingStepRecord[]> {
    const limit = options.limit ?? 100;
    const offset = options.offset ?? 0;
    checkPaging(limit, offset);
    const rows = await this.#database.rows<TrainingStepRow>(`${selectSteps} ORDER BY step DESC LIMIT $1 OFFSET $2`, [limit, offset]);
    return rows.map(toTrainingStepRecord);
  }

  async summary(options: LineageOptions): Promise<TrainingSummary> {
    if (options.user !== undefined) return this.#lineageSummary(options.user);
    const [[row], last] = await Promise.all([
      this.#database.rows<{ steps: number; active: number | null; latest: number | null }>(
        `SELECT (SELECT count(*) FROM training_steps)::integer AS steps, ${activeVersionOf('NULL::text')} AS active,
           (SELECT max(version) FROM policy_versions) AS latest`,
      ),
      this.listSteps({ limit: 1 }),
    ]);
    if (row === undefined) throw new ClawrlError('store_error', 'training summary query returned no row');
    return { steps: row.steps, lastStep: last[0] ?? null, activeVersion: row.active, latestVersion: row.latest };
  }

  async #lineageSummary(user: string | null): Promise<TrainingSummary> {
    const lineageSteps = `FROM training_steps AS step JOIN policy_versions AS version ON version.version = step.policy_version
      WHERE version.user_id IS NOT DISTINCT FROM $1::text`;
    const [[row], [last]] = await Promise.all([
      this.#database.rows<{ steps: number; active: number | null; latest: number | null }>(
        `SELECT (SELECT count(*) ${lineageSteps})::integer AS steps, ${activeVersionOf('$1::text')} AS active,
           (SELECT max(version) FROM policy_versions WHERE user_id IS NOT DISTINCT FROM $1::text) AS latest`,
        [user],
      ),
      this.#database.rows<TrainingStepRow>(
        `SELECT step.step, step.policy_version, step.samples_used, step.metrics, step.checkpoint, step.started_at, step.ended_at ${lineageSteps}
         ORDER BY step.step DESC LIMIT 1`,
        [user],
      ),
    ]);
    if (row === undefined) throw new ClawrlError('store_error', 'training summary query returned no row');
    return { steps: row.steps, lastStep: last === undefined ? null : toTrainingStepRecord(last), activeVersion: row.active, latestVersion: row.latest };
  }

  async sessionVersion(sessionId: string): Promise<PolicyVersion | null> {
    const [row] = await this.#database.rows<{ policy_version: number }>(
      'SELECT policy_version FROM turns WHERE session_id = $1 ORDER BY ordinal LIMIT 1',
      [sessionId],
    );
    return row?.policy_version ?? null;
  }

  async #version(version: PolicyVersion): Promise<PolicyVersionRecord> {
    const [row] = await this.#database.rows<PolicyVersionRow>(`${selectVersions} WHERE version = $1`, [version]);
    if (row === undefined) throw new ClawrlError('store_error', `policy version ${version} vanished after its insert`);
    return toPolicyVersionRecord(row);
  }

  /** Runs inside the caller's transaction. */
  async #storeVersion(client: Queryable, version: NewPolicyVersion, activate: boolean): Promise<void> {
    if (!Number.isInteger(version.version) || version.version < 0) {
      throw new ClawrlError('store_error', `policy version must be a non-negative integer, got ${version.version}`);
    }
    const files = Object.entries(version.files);
    const inserted = await client.query(
      `INSERT INTO policy_versions (version, parent, kind, step, samples, metrics, bytes, created_at, state, state_reason, state_changed_at, user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'candidate', $9, $8, $10) ON CONFLICT (version) DO NOTHING`,
      [
        version.version,
        version.parent,
        version.kind,
        version.step,
        version.samples,
        version.metrics === null ? null : JSON.stringify(version.metrics),
        files.reduce((total, [, bytes]) => total + bytes.byteLength, 0),
        version.createdAt,
        activate ? null : 'waiting for the gate',
        version.user ?? null,
      ],
    );
    if ((inserted.rowCount ?? 0) === 0) {
      throw new ClawrlError('store_error', `policy version ${version.version} is already recorded`);
    }
    for (const [name, bytes] of files) {
      await client.query('INSERT INTO policy_files (version, name, bytes) VALUES ($1, $2, $3)', [
        version.version,
        name,
        Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      ]);
    }
    if (activate) await this.#changeState(client, version.version, 'active', { reason: defaultActivationReason, at: version.createdAt });
  }
}
