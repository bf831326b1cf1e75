/** SQLite migration 12: the lineage of policy versions and the versions erasures tainted (see `sqlite-migrations.ts`). */
export const sqliteErasureMigration = `
  CREATE TABLE policy_lineage (
    version INTEGER NOT NULL,
    sample_id TEXT NOT NULL,
    erased_at INTEGER,
    PRIMARY KEY (version, sample_id)
  ) WITHOUT ROWID;
  CREATE INDEX policy_lineage_by_sample ON policy_lineage (sample_id);
  CREATE INDEX samples_by_training_step ON samples (training_step) WHERE training_step IS NOT NULL;
  INSERT INTO policy_lineage (version, sample_id)
    SELECT step.policy_version, sample.id FROM samples AS sample JOIN training_steps AS step ON step.step = sample.training_step;
  -- Both stores mark a step's samples trained before inserting the step's row.
  CREATE TRIGGER policy_lineage_of_step AFTER INSERT ON training_steps BEGIN
    INSERT OR IGNORE INTO policy_lineage (version, sample_id)
      SELECT NEW.policy_version, id FROM samples WHERE training_step = NEW.step;
  END;

  CREATE TABLE policy_taints (
    version INTEGER PRIMARY KEY,
    erased_samples INTEGER NOT NULL,
    marked_at INTEGER NOT NULL,
    retired_at INTEGER
  );
  CREATE INDEX turns_by_messages_tip ON turns (messages_tip_id) WHERE messages_tip_id IS NOT NULL;
`;
