/** Postgres migration 11: the lineage of policy versions and the versions erasures tainted (see `postgres-migrations.ts`). */
export const postgresErasureMigration = `
  CREATE TABLE policy_lineage (
    version bigint NOT NULL,
    sample_id text NOT NULL,
    erased_at bigint,
    PRIMARY KEY (version, sample_id)
  );
  CREATE INDEX policy_lineage_by_sample ON policy_lineage (sample_id);
  CREATE INDEX samples_by_training_step ON samples (training_step) WHERE training_step IS NOT NULL;
  INSERT INTO policy_lineage (version, sample_id)
    SELECT step.policy_version, sample.id FROM samples AS sample JOIN training_steps AS step ON step.step = sample.training_step;
  -- Both stores mark a step's samples trained before inserting the step's row.
  CREATE FUNCTION policy_lineage_of_step() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO policy_lineage (version, sample_id) SELECT NEW.policy_version, id FROM samples WHERE training_step = NEW.step
      ON CONFLICT DO NOTHING;
    RETURN NULL;
  END $$;
  CREATE TRIGGER policy_lineage_of_step AFTER INSERT ON training_steps FOR EACH ROW EXECUTE FUNCTION policy_lineage_of_step();

  CREATE TABLE policy_taints (
    version bigint PRIMARY KEY,
    erased_samples integer NOT NULL,
    marked_at bigint NOT NULL,
    retired_at bigint
  );
  CREATE INDEX turns_by_messages_tip ON turns (messages_tip_id) WHERE messages_tip_id IS NOT NULL;
`;
