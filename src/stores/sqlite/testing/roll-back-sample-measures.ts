/**
 * Undoes SQLite migrations 8, 6 and 5 on a store file (feedback without its rollout column; for tests of the upgrade: the samples table as
 * then the samples table as schemas 2–4 had it, the judge's combined advantages in `advantages` (NOT NULL) and the method
 * under its CHECK. Rows written since keep an empty advantages blob.
 */
import type Database from 'better-sqlite3';
import { rollBackRecordCounts } from './roll-back-record-counts.js';

export function rollBackSampleMeasures(database: Database.Database): void {
  // Migration 8's triggers read the columns dropped here, so they go first (the migration comes back).
  rollBackRecordCounts(database);
  database.exec(`
    ALTER TABLE feedback DROP COLUMN rollout;
    CREATE TABLE samples_then (
      ordinal INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      turn_ordinal INTEGER NOT NULL REFERENCES turns (ordinal),
      method TEXT NOT NULL CHECK (method IN ('rl', 'opd', 'combine')),
      status TEXT NOT NULL CHECK (status IN ('ready', 'trained', 'dropped')),
      drop_reason TEXT, policy_version INTEGER NOT NULL, judgement_id INTEGER, feedback_id INTEGER, score REAL, hint TEXT,
      loss_mask BLOB NOT NULL, advantages BLOB NOT NULL, teacher_logprobs BLOB, support TEXT,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, lease_owner TEXT, lease_expires_at INTEGER, training_step INTEGER
    );
    INSERT INTO samples_then SELECT ordinal, id, turn_ordinal, method, status, drop_reason, policy_version, judgement_id, feedback_id,
      score, hint, loss_mask, coalesce(judged_advantages, X''), teacher_logprobs, support, created_at, updated_at, lease_owner,
      lease_expires_at, training_step FROM samples;
    DROP TABLE samples;
    ALTER TABLE samples_then RENAME TO samples;
    CREATE INDEX samples_by_status ON samples (status, ordinal);
    CREATE INDEX samples_by_turn ON samples (turn_ordinal, ordinal);
    DELETE FROM schema_migrations WHERE version >= 5;
  `);
}
