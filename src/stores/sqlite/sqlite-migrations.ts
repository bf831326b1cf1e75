/**
 * Versioned schema of the SQLite record store. Migration N (1-based) is `sqliteMigrations[N - 1]`;
 * applied migrations are listed in `schema_migrations`. Append new migrations, never edit one
 * that has shipped: databases in the field have already run it.
 */
import type Database from 'better-sqlite3';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { sqliteCounterMigration } from './sqlite-counter-migration.js';
import { sqliteErasureMigration } from './sqlite-erasure-migration.js';
import { policyStateBackfillSql } from '../policy-state-change.js';

export const sqliteMigrations: readonly string[] = [
  `
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    tenant TEXT,
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    closed_at INTEGER,
    close_reason TEXT CHECK (close_reason IN ('done', 'idle', 'admin')),
    main_turns INTEGER NOT NULL DEFAULT 0,
    side_turns INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX sessions_by_created ON sessions (created_at);
  CREATE INDEX sessions_by_status_created ON sessions (status, created_at);
  CREATE INDEX sessions_by_status_updated ON sessions (status, updated_at);

  CREATE TABLE message_nodes (
    id INTEGER PRIMARY KEY,
    parent_id INTEGER REFERENCES message_nodes (id),
    hash BLOB NOT NULL,
    body TEXT NOT NULL
  );
  CREATE UNIQUE INDEX message_nodes_by_parent_hash ON message_nodes (parent_id, hash);
  -- NULLs are distinct in a UNIQUE index, so roots need their own index to be shared.
  CREATE UNIQUE INDEX message_nodes_roots_by_hash ON message_nodes (hash) WHERE parent_id IS NULL;

  CREATE TABLE tool_sets (
    id INTEGER PRIMARY KEY,
    hash BLOB NOT NULL UNIQUE,
    body TEXT NOT NULL
  );

  CREATE TABLE turns (
    ordinal INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    turn_index INTEGER NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('main', 'side')),
    status TEXT NOT NULL CHECK (status IN ('completed', 'aborted', 'failed')),
    trainable INTEGER NOT NULL CHECK (trainable IN (0, 1)),
    tenant TEXT,
    model TEXT NOT NULL,
    policy_version INTEGER NOT NULL,
    messages_tip_id INTEGER REFERENCES message_nodes (id),
    message_count INTEGER NOT NULL,
    tool_set_id INTEGER NOT NULL REFERENCES tool_sets (id),
    sampling TEXT NOT NULL,
    prompt_base_ordinal INTEGER REFERENCES turns (ordinal),
    prompt_prefix_length INTEGER NOT NULL,
    prompt_suffix BLOB NOT NULL,
    prompt_length INTEGER NOT NULL,
    response_token_ids BLOB NOT NULL,
    logprobs BLOB NOT NULL,
    response TEXT NOT NULL,
    finish_reason TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    first_token_at INTEGER,
    ended_at INTEGER NOT NULL,
    error TEXT,
    reply_key TEXT,
    next_state TEXT,
    next_state_at INTEGER
  );
  CREATE UNIQUE INDEX turns_main_by_session_index ON turns (session_id, turn_index) WHERE turn_index >= 0;
  CREATE INDEX turns_by_session_type ON turns (session_id, type, ordinal);
  CREATE INDEX turns_by_reply_key ON turns (reply_key) WHERE reply_key IS NOT NULL;
  CREATE INDEX turns_by_prompt_base ON turns (prompt_base_ordinal) WHERE prompt_base_ordinal IS NOT NULL;
  `,
  // 2: the judge queue, judgements, feedback and samples. Turns linked before this migration are
  // queued, so upgrading never leaves a turn unjudged.
  `
  CREATE TABLE judge_queue (
    turn_ordinal INTEGER PRIMARY KEY REFERENCES turns (ordinal),
    generation INTEGER NOT NULL DEFAULT 1,
    queued_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    retry_at INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    last_error TEXT
  );
  CREATE INDEX judge_queue_by_due ON judge_queue (retry_at, queued_at);

  CREATE TABLE judgements (
    id INTEGER PRIMARY KEY,
    turn_ordinal INTEGER NOT NULL REFERENCES turns (ordinal),
    judge TEXT NOT NULL,
    judge_model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    score INTEGER CHECK (score IN (-1, 0, 1)),
    votes TEXT NOT NULL,
    hint TEXT,
    hint_candidates TEXT NOT NULL,
    hint_selection TEXT CHECK (hint_selection IN ('overlap', 'longest')),
    wanted_hint INTEGER NOT NULL CHECK (wanted_hint IN (0, 1)),
    readable_votes INTEGER NOT NULL,
    agreeing_votes INTEGER NOT NULL,
    latency_ms REAL NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX judgements_by_identity ON judgements (turn_ordinal, judge, judge_model, prompt_version);

  CREATE TABLE feedback (
    id INTEGER PRIMARY KEY,
    turn_ordinal INTEGER NOT NULL REFERENCES turns (ordinal),
    score REAL CHECK (score BETWEEN -1 AND 1),
    text TEXT,
    hint TEXT,
    tenant TEXT,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX feedback_by_turn ON feedback (turn_ordinal, id);

  CREATE TABLE samples (
    ordinal INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    turn_ordinal INTEGER NOT NULL REFERENCES turns (ordinal),
    method TEXT NOT NULL CHECK (method IN ('rl', 'opd', 'combine')),
    status TEXT NOT NULL CHECK (status IN ('ready', 'trained', 'dropped')),
    drop_reason TEXT,
    policy_version INTEGER NOT NULL,
    judgement_id INTEGER,
    feedback_id INTEGER,
    score REAL,
    hint TEXT,
    loss_mask BLOB NOT NULL,
    advantages BLOB NOT NULL,
    teacher_logprobs BLOB,
    support TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX samples_by_status ON samples (status, ordinal);
  CREATE INDEX samples_by_turn ON samples (turn_ordinal, ordinal);

  INSERT INTO judge_queue (turn_ordinal, queued_at)
    SELECT ordinal, next_state_at FROM turns
    WHERE type = 'main' AND trainable = 1 AND next_state IS NOT NULL;
  `,
  // 3: training. Samples gain a training lease and the step that used them; policy versions keep
  // their artifact files; activations are a history whose latest row is what serving uses.
  `
  ALTER TABLE samples ADD COLUMN lease_owner TEXT;
  ALTER TABLE samples ADD COLUMN lease_expires_at INTEGER;
  ALTER TABLE samples ADD COLUMN training_step INTEGER;

  CREATE TABLE policy_versions (
    version INTEGER PRIMARY KEY,
    parent INTEGER,
    kind TEXT NOT NULL CHECK (kind IN ('base', 'adapter', 'full')),
    step INTEGER,
    samples INTEGER NOT NULL,
    metrics TEXT,
    bytes INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  );

  CREATE TABLE policy_files (
    version INTEGER NOT NULL REFERENCES policy_versions (version),
    name TEXT NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (version, name)
  );

  CREATE TABLE policy_activations (
    id INTEGER PRIMARY KEY,
    version INTEGER NOT NULL REFERENCES policy_versions (version),
    activated_at INTEGER NOT NULL
  );

  CREATE TABLE training_steps (
    step INTEGER PRIMARY KEY,
    policy_version INTEGER NOT NULL UNIQUE REFERENCES policy_versions (version),
    samples_used INTEGER NOT NULL,
    metrics TEXT NOT NULL,
    checkpoint TEXT,
    started_at INTEGER NOT NULL,
    ended_at INTEGER NOT NULL
  );
  `,
  // 4: next states in their own table. Linking a turn was an UPDATE of its row, and SQLite writes an
  // updated row whole, overflow pages included: a turn's prompt suffix, response ids and log-probs
  // were written twice, at the insert and at the link. Now the link is an insert of its own row.
  // Dropping the columns rewrites the turns table once, at the first start after the upgrade.
  `
  CREATE TABLE turn_next_states (
    turn_ordinal INTEGER PRIMARY KEY REFERENCES turns (ordinal),
    next_state TEXT NOT NULL,
    linked_at INTEGER NOT NULL
  );
  INSERT INTO turn_next_states (turn_ordinal, next_state, linked_at)
    SELECT ordinal, next_state, next_state_at FROM turns WHERE next_state IS NOT NULL;
  ALTER TABLE turns DROP COLUMN next_state;
  ALTER TABLE turns DROP COLUMN next_state_at;
  `,
  // 5: samples store what the judge measured, not an advantage. The judge's combined advantages of
  // the samples judged so far stay, as judged_advantages, and the trainer trains those rows on them
  // as before; new rows leave it NULL and store the unclipped teacher − rollout gaps instead. The
  // method loses its CHECK (the stores check it against the methods this clawrl knows), so a new
  // method is not a migration. SQLite cannot drop a constraint, so the table is rebuilt once.
  `
  CREATE TABLE samples_rebuilt (
    ordinal INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    turn_ordinal INTEGER NOT NULL REFERENCES turns (ordinal),
    method TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ready', 'trained', 'dropped')),
    drop_reason TEXT,
    policy_version INTEGER NOT NULL,
    judgement_id INTEGER,
    feedback_id INTEGER,
    score REAL,
    hint TEXT,
    loss_mask BLOB NOT NULL,
    judged_advantages BLOB,
    distillation_gaps BLOB,
    teacher_logprobs BLOB,
    support TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    training_step INTEGER
  );
  INSERT INTO samples_rebuilt (ordinal, id, turn_ordinal, method, status, drop_reason, policy_version, judgement_id,
      feedback_id, score, hint, loss_mask, judged_advantages, distillation_gaps, teacher_logprobs, support, created_at,
      updated_at, lease_owner, lease_expires_at, training_step)
    SELECT ordinal, id, turn_ordinal, method, status, drop_reason, policy_version, judgement_id,
      feedback_id, score, hint, loss_mask, advantages, NULL, teacher_logprobs, support, created_at,
      updated_at, lease_owner, lease_expires_at, training_step
    FROM samples;
  DROP TABLE samples;
  ALTER TABLE samples_rebuilt RENAME TO samples;
  CREATE INDEX samples_by_status ON samples (status, ordinal);
  CREATE INDEX samples_by_turn ON samples (turn_ordinal, ordinal);
  `,
  // 6: feedback a rollout driver sent records its provenance (group, outcome and process rewards,
  // advantage) as JSON; a sample built on it is a rollout sample, every other one live traffic.
  `
  ALTER TABLE feedback ADD COLUMN rollout TEXT;
  `,
  // 7: the dashboard's indexes. Its pages and charts read ranges of these (sessions newest first,
  // turns, judgements and samples of a time window, samples of a policy version), never a whole table.
  `
  CREATE INDEX IF NOT EXISTS sessions_by_created_id ON sessions (created_at, id);
  CREATE INDEX IF NOT EXISTS turns_by_started_type ON turns (started_at, type);
  CREATE INDEX IF NOT EXISTS judgements_by_created ON judgements (created_at);
  CREATE INDEX IF NOT EXISTS samples_by_created ON samples (created_at);
  CREATE INDEX IF NOT EXISTS samples_by_policy_version ON samples (policy_version, score, drop_reason);
  CREATE INDEX IF NOT EXISTS policy_activations_by_time ON policy_activations (activated_at);
  `,
  // 8: the counts of /admin/status as counters kept by triggers (see its file).
  sqliteCounterMigration,
  // 9: a rollout sample names its group and turn index, which the trainer baselines its reward
  // within and claims whole (the index finds a group's other samples). Samples built before have
  // none: their score is the advantage the driver formed then, trained as a reward without a group.
  `
  ALTER TABLE samples ADD COLUMN rollout_group TEXT;
  ALTER TABLE samples ADD COLUMN rollout_turn_index INTEGER;
  CREATE INDEX samples_by_rollout_group ON samples (rollout_group, ordinal) WHERE rollout_group IS NOT NULL;
  `,
  // 10: policy versions have a lifecycle state (candidate, canary, active, rejected, rolled-back,
  // retired) with its reason and the gate's and canary's evidence as JSON. Existing versions get
  // the state their activations show: the active one `active`; older ones `retired` (superseded);
  // newer ones `rolled-back` (serving went back past them); with no activation at all, `retired`.
  `
  ALTER TABLE policy_versions ADD COLUMN state TEXT NOT NULL DEFAULT 'candidate'
    CHECK (state IN ('candidate', 'canary', 'active', 'rejected', 'rolled-back', 'retired'));
  ALTER TABLE policy_versions ADD COLUMN state_reason TEXT;
  ALTER TABLE policy_versions ADD COLUMN state_changed_at INTEGER;
  ALTER TABLE policy_versions ADD COLUMN gate TEXT;
  ALTER TABLE policy_versions ADD COLUMN canary TEXT;
  ${policyStateBackfillSql}
  `,
  // 11 (request controls): why the request kept a turn out of training (X-Clawrl-Train: off, or a
  // retry superseded it) and which retry did. Marking a recorded turn superseded is the one update
  // of a turn's trainable flag, so the counters of migration 8 follow it here.
  `
  ALTER TABLE turns ADD COLUMN untrainable_reason TEXT CHECK (untrainable_reason IN ('train-off', 'superseded'));
  ALTER TABLE turns ADD COLUMN superseded_by TEXT;
  CREATE TRIGGER record_counts_turn_trainable AFTER UPDATE OF trainable ON turns WHEN OLD.trainable <> NEW.trainable BEGIN
    UPDATE record_counts SET value = value + NEW.trainable - OLD.trainable WHERE name = 'turns_trainable';
    UPDATE record_counts SET value = value + NEW.trainable - OLD.trainable WHERE name = 'without_next_state'
      AND NEW.type = 'main' AND EXISTS (SELECT 1 FROM sessions WHERE id = NEW.session_id AND status = 'closed')
      AND NOT EXISTS (SELECT 1 FROM turn_next_states WHERE turn_ordinal = NEW.ordinal)
      AND NOT EXISTS (SELECT 1 FROM feedback WHERE turn_ordinal = NEW.ordinal);
  END;
  `,
  // 12: erasure (`sqlite-erasure.ts`). The lineage of each version (the samples its step trained) is
  // its own table, filled by a trigger as a step commits and kept when its samples are erased, with
  // the time they were; the versions an erasure tainted are marked, and retired when the chosen
  // action retires them. Existing steps' lineage is rebuilt from the samples' training step. The
  // index on message tips lets an erasure tell a shared prefix node (kept) from one only the erased
  // turns used (deleted) without scanning every turn.
  sqliteErasureMigration,
  // 13 (users): the user a request's credentials named (`tenant/name`, or the tenant for a key that
  // names none) on its session, its turns and its feedback. Rows written before users existed
  // belonged to their tenant's one user, the tenant itself.
  `
  ALTER TABLE sessions ADD COLUMN user_id TEXT;
  ALTER TABLE turns ADD COLUMN user_id TEXT;
  ALTER TABLE feedback ADD COLUMN user_id TEXT;
  UPDATE sessions SET user_id = tenant WHERE tenant IS NOT NULL;
  UPDATE turns SET user_id = tenant WHERE tenant IS NOT NULL;
  UPDATE feedback SET user_id = tenant WHERE tenant IS NOT NULL;
  CREATE INDEX sessions_by_user ON sessions (user_id, created_at) WHERE user_id IS NOT NULL;
  CREATE INDEX turns_by_user ON turns (user_id) WHERE user_id IS NOT NULL;
  CREATE INDEX feedback_by_user ON feedback (user_id) WHERE user_id IS NOT NULL;
  `,
  // 14 (policy scope): a sample's user, copied from its turn when the sample is built, so a
  // per-user trainer claims one user's samples alone; a policy version's owner (the lineage it
  // belongs to, null for the global one), also on each activation, so each lineage has its own
  // active version. Versions recorded before belonged to the global lineage.
  `
  ALTER TABLE samples ADD COLUMN user_id TEXT;
  ALTER TABLE policy_versions ADD COLUMN user_id TEXT;
  ALTER TABLE policy_activations ADD COLUMN user_id TEXT;
  UPDATE samples SET user_id = (SELECT turn.user_id FROM turns AS turn WHERE turn.ordinal = samples.turn_ordinal);
  CREATE INDEX samples_ready_by_user ON samples (user_id, ordinal) WHERE status = 'ready';
  CREATE INDEX policy_versions_by_user ON policy_versions (user_id, version) WHERE user_id IS NOT NULL;
  CREATE INDEX policy_activations_by_user ON policy_activations (user_id, id);
  `,
  // 15 (user memory): each user's memory (`spec/user-memory.ts`), unique per user by
  // normalized text. The tenant (the user's part before '/') is kept so an erasure of a tenant finds
  // its users' entries by index; the source turn, so an erased turn takes what it taught.
  `
  CREATE TABLE user_memory (
    id INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('hint', 'feedback', 'note')),
    text TEXT NOT NULL,
    normalized TEXT NOT NULL,
    source_turn_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX user_memory_by_text ON user_memory (user_id, normalized);
  CREATE INDEX user_memory_by_tenant ON user_memory (tenant);
  CREATE INDEX user_memory_by_source_turn ON user_memory (source_turn_id) WHERE source_turn_id IS NOT NULL;
  `,
];

/**
 * Brings the database up to the latest schema. Each migration runs in its own IMMEDIATE
 * transaction, which takes the write lock before reading the version, so two processes opening
 * the same new file cannot both apply a migration.
 */
export function applySqliteMigrations(database: Database.Database): void {
  database.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)');
  const readVersion = database.prepare<[], { version: number | null }>(
    'SELECT max(version) AS version FROM schema_migrations',
  );
  const recordVersion = database.prepare<[number]>('INSERT INTO schema_migrations (version) VALUES (?)');
  const applied = readVersion.get()?.version ?? 0;
  if (applied > sqliteMigrations.length) {
    throw new ClawrlError(
      'store_error',
      `the database is at schema version ${applied}, newer than this clawrl knows ` +
        `(${sqliteMigrations.length}); upgrade clawrl`,
    );
  }
  sqliteMigrations.forEach((sql, position) => {
    const version = position + 1;
    const migrate = database.transaction(() => {
      if ((readVersion.get()?.version ?? 0) >= version) return;
      database.exec(sql);
      recordVersion.run(version);
    });
    migrate.immediate();
  });
}
