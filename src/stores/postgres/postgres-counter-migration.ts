/**
 * Postgres migration 7: the counts of /admin/status as counters. Counting them scanned whole tables
 * (~380 ms at 100k turns); triggers now record each write's change to a count, in the write's own
 * transaction, as rows of record_count_deltas, and the store sums them (folding them into one row per
 * counter as it reads). Deltas are inserts, never updates of a shared row, so writers in several
 * processes neither queue behind one counter row nor deadlock on counters.
 *
 * Counts that depend on other rows than the one written (is the session closed, has the turn
 * feedback or a judgement) first lock the turn's session (FOR NO KEY UPDATE, as closing it and
 * recording a turn in it do; foreign-key checks do not wait for it). Under READ COMMITTED each
 * statement of a trigger function reads a fresh snapshot, so after the lock the trigger sees the
 * other writer's committed rows, and of two racing writes exactly one changes the count. The
 * writes that fire these triggers are single statements whose row triggers run at the statement's
 * end, so the session lock is the last lock each takes: it cannot close a cycle of waits (locking
 * the turn instead did, against a link waiting for the judge-queue row a feedback had just queued).
 * The migration starts the counters from the rows already there.
 */
/**
 * The counts computed from the rows themselves: what the migration started the counters from, and
 * what an erasure (`record-erasure.ts`) resets them to after deleting rows the triggers do not follow.
 */
export const postgresCounterSeed = `    SELECT 'sessions_open', count(*) FROM sessions WHERE status = 'open'
    UNION ALL SELECT 'sessions_closed', count(*) FROM sessions WHERE status = 'closed'
    UNION ALL SELECT 'turns_main', count(*) FROM turns WHERE type = 'main'
    UNION ALL SELECT 'turns_side', count(*) FROM turns WHERE type = 'side'
    UNION ALL SELECT 'turns_aborted', count(*) FROM turns WHERE status = 'aborted'
    UNION ALL SELECT 'turns_failed', count(*) FROM turns WHERE status = 'failed'
    UNION ALL SELECT 'turns_trainable', count(*) FROM turns WHERE trainable
    UNION ALL SELECT 'turns_linked', count(*) FROM turns WHERE type = 'main' AND next_state IS NOT NULL
    UNION ALL SELECT 'judged', count(*) FROM (SELECT turn_ordinal FROM judgements UNION SELECT turn_ordinal FROM feedback) AS judged
    UNION ALL SELECT 'pending', count(*) FROM judge_queue
    UNION ALL SELECT 'retrying', count(*) FROM judge_queue WHERE attempts > 0
    UNION ALL SELECT 'without_next_state', count(*) FROM turns AS turn JOIN sessions AS session ON session.id = turn.session_id
      WHERE turn.type = 'main' AND turn.trainable AND turn.next_state IS NULL AND session.status = 'closed'
        AND NOT EXISTS (SELECT 1 FROM feedback WHERE feedback.turn_ordinal = turn.ordinal)
    UNION ALL SELECT 'hints_accepted', count(*) FROM judgements WHERE wanted_hint AND hint IS NOT NULL
    UNION ALL SELECT 'hints_rejected', count(*) FROM judgements WHERE wanted_hint AND hint IS NULL
    UNION ALL SELECT 'judgements', count(*) FROM judgements
    UNION ALL SELECT 'latency_ms_sum', coalesce(sum(latency_ms), 0) FROM judgements
    UNION ALL SELECT 'readable_votes', coalesce(sum(readable_votes), 0) FROM judgements
    UNION ALL SELECT 'agreeing_votes', coalesce(sum(agreeing_votes), 0) FROM judgements
    UNION ALL SELECT 'samples_' || status.name, (SELECT count(*) FROM samples WHERE samples.status = status.name)
      FROM (VALUES ('ready'), ('trained'), ('dropped')) AS status (name)
    UNION ALL SELECT 'rollout_samples_' || status.name, (SELECT count(*) FROM samples JOIN feedback ON feedback.id = samples.feedback_id
        WHERE samples.status = status.name AND feedback.rollout IS NOT NULL)
      FROM (VALUES ('ready'), ('trained'), ('dropped')) AS status (name)`;

export const postgresCounterMigration = `
  CREATE TABLE record_count_deltas (name text NOT NULL, delta double precision NOT NULL);
  INSERT INTO record_count_deltas (name, delta)
${postgresCounterSeed};

  CREATE FUNCTION record_counts_add(deltas record_count_deltas[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO record_count_deltas (name, delta) SELECT name, delta FROM unnest(deltas) WHERE delta <> 0
  $$;

  -- Trainable main turns of a closed session with neither a next state nor feedback.
  CREATE FUNCTION record_counts_without_next_state(turn turns) RETURNS integer LANGUAGE sql AS $$
    SELECT (turn.type = 'main' AND turn.trainable AND turn.next_state IS NULL
      AND EXISTS (SELECT 1 FROM sessions WHERE id = turn.session_id AND status = 'closed')
      AND NOT EXISTS (SELECT 1 FROM feedback WHERE feedback.turn_ordinal = turn.ordinal))::integer
  $$;

  CREATE FUNCTION record_counts_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      PERFORM record_counts_add(ARRAY[('sessions_' || NEW.status, 1)]::record_count_deltas[]);
    ELSE
      PERFORM record_counts_add(ARRAY[
        ('sessions_' || OLD.status, -1), ('sessions_' || NEW.status, 1),
        ('without_next_state', (CASE NEW.status WHEN 'closed' THEN 1 ELSE -1 END) * (
          SELECT count(*) FROM turns AS turn WHERE turn.session_id = NEW.id AND turn.type = 'main' AND turn.trainable
            AND turn.next_state IS NULL AND NOT EXISTS (SELECT 1 FROM feedback WHERE feedback.turn_ordinal = turn.ordinal)))
      ]::record_count_deltas[]);
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER record_counts_session_inserted AFTER INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION record_counts_sessions();
  CREATE TRIGGER record_counts_session_status AFTER UPDATE OF status ON sessions
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION record_counts_sessions();

  -- Recording a turn has locked its session already (it counts the turn there first).
  CREATE FUNCTION record_counts_turn_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM record_counts_add(ARRAY[
      ('turns_main', (NEW.type = 'main')::integer), ('turns_side', (NEW.type = 'side')::integer),
      ('turns_aborted', (NEW.status = 'aborted')::integer), ('turns_failed', (NEW.status = 'failed')::integer),
      ('turns_trainable', NEW.trainable::integer), ('turns_linked', (NEW.type = 'main' AND NEW.next_state IS NOT NULL)::integer),
      ('without_next_state', record_counts_without_next_state(NEW))
    ]::record_count_deltas[]);
    RETURN NULL;
  END $$;
  CREATE TRIGGER record_counts_turn_inserted AFTER INSERT ON turns FOR EACH ROW EXECUTE FUNCTION record_counts_turn_inserted();

  -- The link's UPDATE holds the turn; the session comes next.
  CREATE FUNCTION record_counts_next_state_linked() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM 1 FROM sessions WHERE id = NEW.session_id FOR NO KEY UPDATE;
    PERFORM record_counts_add(ARRAY[
      ('turns_linked', (NEW.type = 'main')::integer),
      ('without_next_state', -record_counts_without_next_state(OLD))
    ]::record_count_deltas[]);
    RETURN NULL;
  END $$;
  CREATE TRIGGER record_counts_next_state_linked AFTER UPDATE OF next_state ON turns
    FOR EACH ROW WHEN (OLD.next_state IS NULL AND NEW.next_state IS NOT NULL) EXECUTE FUNCTION record_counts_next_state_linked();

  -- Feedback is never updated nor deleted; only a turn's first feedback changes what it counts in.
  CREATE FUNCTION record_counts_feedback_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    turn turns;
  BEGIN
    PERFORM 1 FROM sessions WHERE id = (SELECT session_id FROM turns WHERE ordinal = NEW.turn_ordinal) FOR NO KEY UPDATE;
    IF (SELECT count(*) FROM feedback WHERE turn_ordinal = NEW.turn_ordinal) = 1 THEN
      SELECT * INTO turn FROM turns WHERE ordinal = NEW.turn_ordinal;
      PERFORM record_counts_add(ARRAY[
        ('judged', (NOT EXISTS (SELECT 1 FROM judgements WHERE turn_ordinal = NEW.turn_ordinal))::integer),
        ('without_next_state', -(turn.type = 'main' AND turn.trainable AND turn.next_state IS NULL
          AND EXISTS (SELECT 1 FROM sessions WHERE id = turn.session_id AND status = 'closed'))::integer)
      ]::record_count_deltas[]);
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER record_counts_feedback_inserted AFTER INSERT ON feedback FOR EACH ROW EXECUTE FUNCTION record_counts_feedback_inserted();

  -- A judgement is replaced in place (an upsert on its identity): the same turn, other figures.
  CREATE FUNCTION record_counts_judgements() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    deltas record_count_deltas[] := ARRAY[]::record_count_deltas[];
    ordinal bigint;
  BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
      deltas := deltas || ARRAY[
        ('judgements', -1), ('hints_accepted', -(OLD.wanted_hint AND OLD.hint IS NOT NULL)::integer),
        ('hints_rejected', -(OLD.wanted_hint AND OLD.hint IS NULL)::integer), ('latency_ms_sum', -OLD.latency_ms),
        ('readable_votes', -OLD.readable_votes), ('agreeing_votes', -OLD.agreeing_votes)
      ]::record_count_deltas[];
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      deltas := deltas || ARRAY[
        ('judgements', 1), ('hints_accepted', (NEW.wanted_hint AND NEW.hint IS NOT NULL)::integer),
        ('hints_rejected', (NEW.wanted_hint AND NEW.hint IS NULL)::integer), ('latency_ms_sum', NEW.latency_ms),
        ('readable_votes', NEW.readable_votes), ('agreeing_votes', NEW.agreeing_votes)
      ]::record_count_deltas[];
    END IF;
    IF TG_OP = 'INSERT' THEN
      ordinal := NEW.turn_ordinal;
      PERFORM 1 FROM sessions WHERE id = (SELECT session_id FROM turns WHERE turns.ordinal = NEW.turn_ordinal) FOR NO KEY UPDATE;
      deltas := deltas || ARRAY[('judged', ((SELECT count(*) FROM judgements WHERE turn_ordinal = ordinal) = 1
        AND NOT EXISTS (SELECT 1 FROM feedback WHERE turn_ordinal = ordinal))::integer)]::record_count_deltas[];
    ELSIF TG_OP = 'DELETE' THEN
      ordinal := OLD.turn_ordinal;
      PERFORM 1 FROM sessions WHERE id = (SELECT session_id FROM turns WHERE turns.ordinal = OLD.turn_ordinal) FOR NO KEY UPDATE;
      deltas := deltas || ARRAY[('judged', -(NOT EXISTS (SELECT 1 FROM judgements WHERE turn_ordinal = ordinal)
        AND NOT EXISTS (SELECT 1 FROM feedback WHERE turn_ordinal = ordinal))::integer)]::record_count_deltas[];
    END IF;
    PERFORM record_counts_add(deltas);
    RETURN NULL;
  END $$;
  CREATE TRIGGER record_counts_judgements AFTER INSERT OR UPDATE OR DELETE ON judgements FOR EACH ROW EXECUTE FUNCTION record_counts_judgements();

  CREATE FUNCTION record_counts_judge_queue() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      PERFORM record_counts_add(ARRAY[('pending', 1), ('retrying', (NEW.attempts > 0)::integer)]::record_count_deltas[]);
    ELSIF TG_OP = 'UPDATE' THEN
      PERFORM record_counts_add(ARRAY[('retrying', (NEW.attempts > 0)::integer - (OLD.attempts > 0)::integer)]::record_count_deltas[]);
    ELSE
      PERFORM record_counts_add(ARRAY[('pending', -1), ('retrying', -(OLD.attempts > 0)::integer)]::record_count_deltas[]);
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER record_counts_judge_queue AFTER INSERT OR DELETE OR UPDATE OF attempts ON judge_queue
    FOR EACH ROW EXECUTE FUNCTION record_counts_judge_queue();

  -- A sample is a rollout sample when the feedback it was built on (never updated) came from a rollout.
  CREATE FUNCTION record_counts_samples() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    rollout integer := (EXISTS (SELECT 1 FROM feedback WHERE id = NEW.feedback_id AND feedback.rollout IS NOT NULL))::integer;
  BEGIN
    IF TG_OP = 'UPDATE' THEN
      PERFORM record_counts_add(ARRAY[('samples_' || OLD.status, -1), ('rollout_samples_' || OLD.status, -rollout)]::record_count_deltas[]);
    END IF;
    PERFORM record_counts_add(ARRAY[('samples_' || NEW.status, 1), ('rollout_samples_' || NEW.status, rollout)]::record_count_deltas[]);
    RETURN NULL;
  END $$;
  CREATE TRIGGER record_counts_sample_inserted AFTER INSERT ON samples FOR EACH ROW EXECUTE FUNCTION record_counts_samples();
  CREATE TRIGGER record_counts_sample_status AFTER UPDATE OF status ON samples
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION record_counts_samples();
`;
