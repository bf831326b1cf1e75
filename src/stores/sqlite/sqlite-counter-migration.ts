/**
 * SQLite migration 8: the counts of /admin/status as counters. Counting them scanned whole tables (~250 ms at 100k
 * turns, on the HTTP thread); triggers now keep each one in record_counts, in the transaction of
 * the write that changes it, and the migration starts them from the rows already there. SQLite
 * runs one write transaction at a time, so a trigger's reads of other rows (is the session closed,
 * has the turn feedback) see every earlier write. The value column has no type: integer counts
 * stay integers, the latency sum stays real.
 */
/**
 * The counts computed from the rows themselves: what the migration started the counters from, and
 * what an erasure (`record-erasure.ts`) resets them to after deleting rows the triggers do not follow.
 */
export const sqliteCounterSeed = `    SELECT 'sessions_open', count(*) FROM sessions WHERE status = 'open'
    UNION ALL SELECT 'sessions_closed', count(*) FROM sessions WHERE status = 'closed'
    UNION ALL SELECT 'turns_main', count(*) FROM turns WHERE type = 'main'
    UNION ALL SELECT 'turns_side', count(*) FROM turns WHERE type = 'side'
    UNION ALL SELECT 'turns_aborted', count(*) FROM turns WHERE status = 'aborted'
    UNION ALL SELECT 'turns_failed', count(*) FROM turns WHERE status = 'failed'
    UNION ALL SELECT 'turns_trainable', count(*) FROM turns WHERE trainable = 1
    UNION ALL SELECT 'turns_linked', count(*) FROM turn_next_states
    UNION ALL SELECT 'judged', count(*) FROM (SELECT turn_ordinal FROM judgements UNION SELECT turn_ordinal FROM feedback)
    UNION ALL SELECT 'pending', count(*) FROM judge_queue
    UNION ALL SELECT 'retrying', count(*) FROM judge_queue WHERE attempts > 0
    UNION ALL SELECT 'without_next_state', count(*) FROM turns AS turn JOIN sessions AS session ON session.id = turn.session_id
      WHERE turn.type = 'main' AND turn.trainable = 1 AND session.status = 'closed'
        AND NOT EXISTS (SELECT 1 FROM turn_next_states WHERE turn_next_states.turn_ordinal = turn.ordinal)
        AND NOT EXISTS (SELECT 1 FROM feedback WHERE feedback.turn_ordinal = turn.ordinal)
    UNION ALL SELECT 'hints_accepted', count(*) FROM judgements WHERE wanted_hint = 1 AND hint IS NOT NULL
    UNION ALL SELECT 'hints_rejected', count(*) FROM judgements WHERE wanted_hint = 1 AND hint IS NULL
    UNION ALL SELECT 'judgements', count(*) FROM judgements
    UNION ALL SELECT 'latency_ms_sum', coalesce(sum(latency_ms), 0.0) FROM judgements
    UNION ALL SELECT 'readable_votes', coalesce(sum(readable_votes), 0) FROM judgements
    UNION ALL SELECT 'agreeing_votes', coalesce(sum(agreeing_votes), 0) FROM judgements
    UNION ALL SELECT 'samples_' || status.name, (SELECT count(*) FROM samples WHERE samples.status = status.name)
      FROM (SELECT 'ready' AS name UNION ALL SELECT 'trained' UNION ALL SELECT 'dropped') AS status
    UNION ALL SELECT 'rollout_samples_' || status.name, (SELECT count(*) FROM samples JOIN feedback ON feedback.id = samples.feedback_id
        WHERE samples.status = status.name AND feedback.rollout IS NOT NULL)
      FROM (SELECT 'ready' AS name UNION ALL SELECT 'trained' UNION ALL SELECT 'dropped') AS status`;

export const sqliteCounterMigration = `
  CREATE TABLE record_counts (name TEXT PRIMARY KEY, value NOT NULL) WITHOUT ROWID;
  INSERT INTO record_counts (name, value)
${sqliteCounterSeed};

  CREATE TRIGGER record_counts_session_inserted AFTER INSERT ON sessions BEGIN
    UPDATE record_counts SET value = value + 1 WHERE name = 'sessions_' || NEW.status;
  END;
  -- A session that closes (or reopens) moves its trainable main turns that have neither a next
  -- state nor feedback into (or out of) without_next_state.
  CREATE TRIGGER record_counts_session_status AFTER UPDATE OF status ON sessions WHEN OLD.status <> NEW.status BEGIN
    UPDATE record_counts SET value = value - 1 WHERE name = 'sessions_' || OLD.status;
    UPDATE record_counts SET value = value + 1 WHERE name = 'sessions_' || NEW.status;
    UPDATE record_counts SET value = value + (CASE NEW.status WHEN 'closed' THEN 1 ELSE -1 END) * (
      SELECT count(*) FROM turns AS turn WHERE turn.session_id = NEW.id AND turn.type = 'main' AND turn.trainable = 1
        AND NOT EXISTS (SELECT 1 FROM turn_next_states WHERE turn_next_states.turn_ordinal = turn.ordinal)
        AND NOT EXISTS (SELECT 1 FROM feedback WHERE feedback.turn_ordinal = turn.ordinal))
    WHERE name = 'without_next_state';
  END;
  -- Turns are never updated nor deleted; a new turn has neither a next state nor feedback.
  CREATE TRIGGER record_counts_turn_inserted AFTER INSERT ON turns BEGIN
    UPDATE record_counts SET value = value + CASE name
        WHEN 'turns_main' THEN NEW.type = 'main'
        WHEN 'turns_side' THEN NEW.type = 'side'
        WHEN 'turns_aborted' THEN NEW.status = 'aborted'
        WHEN 'turns_failed' THEN NEW.status = 'failed'
        WHEN 'turns_trainable' THEN NEW.trainable = 1
        ELSE NEW.type = 'main' AND NEW.trainable = 1
          AND EXISTS (SELECT 1 FROM sessions WHERE id = NEW.session_id AND status = 'closed')
      END
    WHERE name IN ('turns_main', 'turns_side', 'turns_aborted', 'turns_failed', 'turns_trainable', 'without_next_state');
  END;
  CREATE TRIGGER record_counts_next_state_linked AFTER INSERT ON turn_next_states BEGIN
    UPDATE record_counts SET value = value + 1 WHERE name = 'turns_linked';
    UPDATE record_counts SET value = value - 1 WHERE name = 'without_next_state' AND EXISTS (
      SELECT 1 FROM turns AS turn JOIN sessions AS session ON session.id = turn.session_id
      WHERE turn.ordinal = NEW.turn_ordinal AND turn.type = 'main' AND turn.trainable = 1 AND session.status = 'closed'
        AND NOT EXISTS (SELECT 1 FROM feedback WHERE feedback.turn_ordinal = turn.ordinal));
  END;
  -- Feedback is never updated nor deleted; only a turn's first feedback changes what it counts in.
  CREATE TRIGGER record_counts_feedback_inserted AFTER INSERT ON feedback
  WHEN (SELECT count(*) FROM feedback WHERE turn_ordinal = NEW.turn_ordinal) = 1 BEGIN
    UPDATE record_counts SET value = value + 1 WHERE name = 'judged'
      AND NOT EXISTS (SELECT 1 FROM judgements WHERE turn_ordinal = NEW.turn_ordinal);
    UPDATE record_counts SET value = value - 1 WHERE name = 'without_next_state' AND EXISTS (
      SELECT 1 FROM turns AS turn JOIN sessions AS session ON session.id = turn.session_id
      WHERE turn.ordinal = NEW.turn_ordinal AND turn.type = 'main' AND turn.trainable = 1 AND session.status = 'closed'
        AND NOT EXISTS (SELECT 1 FROM turn_next_states WHERE turn_next_states.turn_ordinal = turn.ordinal));
  END;
  -- A judgement is replaced by deleting the one of the same identity and inserting the new one.
  CREATE TRIGGER record_counts_judgement_inserted AFTER INSERT ON judgements BEGIN
    UPDATE record_counts SET value = value + CASE name
        WHEN 'judgements' THEN 1
        WHEN 'hints_accepted' THEN NEW.wanted_hint = 1 AND NEW.hint IS NOT NULL
        WHEN 'hints_rejected' THEN NEW.wanted_hint = 1 AND NEW.hint IS NULL
        WHEN 'latency_ms_sum' THEN NEW.latency_ms
        WHEN 'readable_votes' THEN NEW.readable_votes
        WHEN 'agreeing_votes' THEN NEW.agreeing_votes
        ELSE (SELECT count(*) FROM judgements WHERE turn_ordinal = NEW.turn_ordinal) = 1
          AND NOT EXISTS (SELECT 1 FROM feedback WHERE turn_ordinal = NEW.turn_ordinal)
      END
    WHERE name IN ('judgements', 'hints_accepted', 'hints_rejected', 'latency_ms_sum', 'readable_votes', 'agreeing_votes', 'judged');
  END;
  CREATE TRIGGER record_counts_judgement_deleted AFTER DELETE ON judgements BEGIN
    UPDATE record_counts SET value = value - CASE name
        WHEN 'judgements' THEN 1
        WHEN 'hints_accepted' THEN OLD.wanted_hint = 1 AND OLD.hint IS NOT NULL
        WHEN 'hints_rejected' THEN OLD.wanted_hint = 1 AND OLD.hint IS NULL
        WHEN 'latency_ms_sum' THEN OLD.latency_ms
        WHEN 'readable_votes' THEN OLD.readable_votes
        WHEN 'agreeing_votes' THEN OLD.agreeing_votes
        ELSE NOT EXISTS (SELECT 1 FROM judgements WHERE turn_ordinal = OLD.turn_ordinal)
          AND NOT EXISTS (SELECT 1 FROM feedback WHERE turn_ordinal = OLD.turn_ordinal)
      END
    WHERE name IN ('judgements', 'hints_accepted', 'hints_rejected', 'latency_ms_sum', 'readable_votes', 'agreeing_votes', 'judged');
  END;
  CREATE TRIGGER record_counts_queued AFTER INSERT ON judge_queue BEGIN
    UPDATE record_counts SET value = value + CASE name WHEN 'pending' THEN 1 ELSE NEW.attempts > 0 END
    WHERE name IN ('pending', 'retrying');
  END;
  CREATE TRIGGER record_counts_queue_attempts AFTER UPDATE OF attempts ON judge_queue BEGIN
    UPDATE record_counts SET value = value + (NEW.attempts > 0) - (OLD.attempts > 0) WHERE name = 'retrying';
  END;
  CREATE TRIGGER record_counts_dequeued AFTER DELETE ON judge_queue BEGIN
    UPDATE record_counts SET value = value - CASE name WHEN 'pending' THEN 1 ELSE OLD.attempts > 0 END
    WHERE name IN ('pending', 'retrying');
  END;
  -- A sample is a rollout sample when the feedback it was built on (never updated) came from a rollout.
  CREATE TRIGGER record_counts_sample_inserted AFTER INSERT ON samples BEGIN
    UPDATE record_counts SET value = value + 1 WHERE name = 'samples_' || NEW.status
      OR (name = 'rollout_samples_' || NEW.status AND EXISTS (SELECT 1 FROM feedback WHERE id = NEW.feedback_id AND rollout IS NOT NULL));
  END;
  CREATE TRIGGER record_counts_sample_status AFTER UPDATE OF status ON samples WHEN OLD.status <> NEW.status BEGIN
    UPDATE record_counts SET value = value - 1 WHERE name = 'samples_' || OLD.status
      OR (name = 'rollout_samples_' || OLD.status AND EXISTS (SELECT 1 FROM feedback WHERE id = OLD.feedback_id AND rollout IS NOT NULL));
    UPDATE record_counts SET value = value + 1 WHERE name = 'samples_' || NEW.status
      OR (name = 'rollout_samples_' || NEW.status AND EXISTS (SELECT 1 FROM feedback WHERE id = NEW.feedback_id AND rollout IS NOT NULL));
  END;
`;
