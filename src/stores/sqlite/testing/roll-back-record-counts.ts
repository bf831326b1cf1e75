/**
 * Undoes SQLite migrations 15 (no user memory), 14 (no policy scope), 13 (no users), 12 (no lineage, no taints), 11 (turns without their untrainable reason and
 * supersession), 10 (policy versions without their lifecycle state), 9 (samples without their rollout
 * group) and 8 (no record_counts table,
 * no triggers keeping it) on a store file: for tests of the upgrade, which must start the counters
 * from the rows written before it.
 */
import type Database from 'better-sqlite3';

/** Undoes SQLite migration 15: no user memory. */
export function rollBackUserMemory(database: Database.Database): void {
  database.exec(`
    DROP TABLE user_memory;
    DELETE FROM schema_migrations WHERE version >= 15;
  `);
}

/** Undoes SQLite migrations 15 and 14: no user memory; samples, policy versions and activations without their user. */
export function rollBackPolicyScope(database: Database.Database): void {
  rollBackUserMemory(database);
  database.exec(`
    DROP INDEX samples_ready_by_user;
    DROP INDEX policy_versions_by_user;
    DROP INDEX policy_activations_by_user;
    ALTER TABLE samples DROP COLUMN user_id;
    ALTER TABLE policy_versions DROP COLUMN user_id;
    ALTER TABLE policy_activations DROP COLUMN user_id;
    DELETE FROM schema_migrations WHERE version >= 14;
  `);
}

/** Undoes SQLite migrations 15 to 13: sessions, turns and feedback without their user. */
export function rollBackUsers(database: Database.Database): void {
  rollBackPolicyScope(database);
  database.exec(`
    DROP INDEX sessions_by_user;
    DROP INDEX turns_by_user;
    DROP INDEX feedback_by_user;
    ALTER TABLE sessions DROP COLUMN user_id;
    ALTER TABLE turns DROP COLUMN user_id;
    ALTER TABLE feedback DROP COLUMN user_id;
    DELETE FROM schema_migrations WHERE version >= 13;
  `);
}

/** Undoes SQLite migrations 15 to 12: no user memory, no policy scope, no users, no lineage, no taints, nor their indexes. */
export function rollBackErasureLineage(database: Database.Database): void {
  rollBackUsers(database);
  database.exec(`
    DROP TRIGGER policy_lineage_of_step;
    DROP TABLE policy_lineage;
    DROP TABLE policy_taints;
    DROP INDEX samples_by_training_step;
    DROP INDEX turns_by_messages_tip;
    DELETE FROM schema_migrations WHERE version >= 12;
  `);
}

export function rollBackRecordCounts(database: Database.Database): void {
  rollBackErasureLineage(database);
  database.exec(`
    DROP TRIGGER record_counts_turn_trainable;
    ALTER TABLE turns DROP COLUMN untrainable_reason;
    ALTER TABLE turns DROP COLUMN superseded_by;
    ALTER TABLE policy_versions DROP COLUMN state;
    ALTER TABLE policy_versions DROP COLUMN state_reason;
    ALTER TABLE policy_versions DROP COLUMN state_changed_at;
    ALTER TABLE policy_versions DROP COLUMN gate;
    ALTER TABLE policy_versions DROP COLUMN canary;
    DROP INDEX samples_by_rollout_group;
    ALTER TABLE samples DROP COLUMN rollout_group;
    ALTER TABLE samples DROP COLUMN rollout_turn_index;
  `);
  const triggers = database
    .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'record\\_counts\\_%' ESCAPE '\\'")
    .all();
  for (const trigger of triggers) database.exec(`DROP TRIGGER ${trigger.name}`);
  database.exec('DROP TABLE IF EXISTS record_counts; DELETE FROM schema_migrations WHERE version >= 8;');
}
