/**
 * Erasure in the Postgres record store (the `RecordErasure` role, `spec/record-erasure.ts`), in the
 * same order as the SQLite store's (`../sqlite/sqlite-erasure.ts`), in one transaction; the store
 * vacuums the tables afterwards, so the deleted row versions' space is reclaimed.
 *
 * The counters are recounted from the rows at the end, with the deltas table locked (EXCLUSIVE) for
 * the rest of the transaction: writers that committed before the lock are in the recount, and a
 * writer after it waits to add its delta until the recount has replaced the old ones.
 */
import { taintedVersionsOf, type VersionParent } from '../../core/tainted-versions.js';
import { encodeInt32Blob } from '../../core/token-blob-codec.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';
import type { ErasedCounts, ErasureResult, ErasureTarget, TaintedVersion } from '../../spec/record-erasure.js';
import { memoryOwnerOf, ownerOf } from '../erasure-owner.js';
import { postgresCounterSeed } from './postgres-counter-migration.js';
import type { Queryable } from './postgres-database.js';
import { loadTurnTokens } from './postgres-turn-rows.js';
import { erasePostgresMemory } from './postgres-user-memory.js';

interface ErasedTurnRow {
  ordinal: string;
  id: string;
  session_id: string;
  messages_tip_id: string | null;
  tool_set_id: string;
}

const turnColumns = 'ordinal, id, session_id, messages_tip_id, tool_set_id';

async function selectTurns(client: Queryable, target: ErasureTarget): Promise<ErasedTurnRow[]> {
  const query = (where: string, value: unknown) => client.query<ErasedTurnRow>(`SELECT ${turnColumns} FROM turns WHERE ${where}`, [value]);
  switch (target.kind) {
    case 'session':
      return (await query('session_id = $1', target.sessionId)).rows;
    case 'user':
    case 'tenant': {
      // A turn names the user and tenant whose key sent it, which may differ from the one that opened its session.
      const { column, name } = ownerOf(target);
      return (await query(`${column} = $1 OR session_id IN (SELECT id FROM sessions WHERE ${column} = $1)`, name)).rows;
    }
    case 'before':
      return (await query('started_at < $1', target.before)).rows;
  }
}

async function selectSessions(client: Queryable, target: ErasureTarget): Promise<string[]> {
  const ids = async (sql: string, value: unknown) => (await client.query<{ id: string }>(sql, [value])).rows.map((row) => row.id);
  switch (target.kind) {
    case 'session':
      return ids('SELECT id FROM sessions WHERE id = $1', target.sessionId);
    case 'user':
    case 'tenant': {
      const { column, name } = ownerOf(target);
      return ids(`SELECT id FROM sessions WHERE ${column} = $1`, name);
    }
    case 'before':
      return ids('SELECT id FROM sessions WHERE updated_at < $1 AND NOT EXISTS (SELECT 1 FROM turns WHERE turns.session_id = sessions.id)', target.before);
  }
}

/** Deletes the message nodes of `tips`' paths that no remaining turn or node uses, children first. */
async function pruneMessageNodes(client: Queryable, tips: readonly string[]): Promise<number> {
  if (tips.length === 0) return 0;
  const { rows } = await client.query<{ id: string }>(
    `WITH RECURSIVE path (id) AS (
       SELECT unnest($1::bigint[])
       UNION
       SELECT node.parent_id FROM message_nodes AS node JOIN path ON node.id = path.id WHERE node.parent_id IS NOT NULL
     )
     SELECT id FROM path ORDER BY id DESC`,
    [tips],
  );
  let removed = 0;
  for (const { id } of rows) {
    const result = await client.query(
      `DELETE FROM message_nodes WHERE id = $1
         AND NOT EXISTS (SELECT 1 FROM turns WHERE messages_tip_id = $1) AND NOT EXISTS (SELECT 1 FROM message_nodes WHERE parent_id = $1)`,
      [id],
    );
    removed += result.rowCount ?? 0;
  }
  return removed;
}

async function versionParents(client: Queryable): Promise<VersionParent[]> {
  const { rows } = await client.query<{ version: string; parent: string | null }>('SELECT version, parent FROM policy_versions');
  return rows.map((row) => ({ version: Number(row.version), parent: row.parent === null ? null : Number(row.parent) }));
}

/** Erases what `target` names inside the caller's transaction. */
export async function erasePostgresRows(client: Queryable, target: ErasureTarget, at: number): Promise<ErasureResult> {
  await client.query('LOCK TABLE record_count_deltas IN EXCLUSIVE MODE');
  const turns = await selectTurns(client, target);
  const ordinals = turns.map((turn) => turn.ordinal);
  const samples = (
    await client.query<{ id: string; leased: boolean }>('SELECT id, lease_owner IS NOT NULL AS leased FROM samples WHERE turn_ordinal = ANY($1::bigint[]) FOR UPDATE', [ordinals])
  ).rows;
  // FOR UPDATE above: a training step committing these samples at the same moment either committed
  // first (its lineage is read below, after the lock) or waits and then finds them gone (refused).
  const sampleIds = samples.map((sample) => sample.id);
  await client.query('UPDATE policy_lineage SET erased_at = $1 WHERE erased_at IS NULL AND sample_id = ANY($2::text[])', [at, sampleIds]);
  const trainedOn = (
    await client.query<{ version: string; erased: number }>('SELECT version, count(*)::integer AS erased FROM policy_lineage WHERE sample_id = ANY($1::text[]) GROUP BY version', [sampleIds])
  ).rows;

  // Remaining turns whose prompt was stored as a prefix of an erased turn's: stored whole first.
  const survivors = (
    await client.query<{ ordinal: string }>('SELECT ordinal FROM turns WHERE prompt_base_ordinal = ANY($1::bigint[]) AND NOT (ordinal = ANY($1::bigint[]))', [ordinals])
  ).rows;
  for (const { ordinal } of survivors) {
    const { promptTokenIds } = await loadTurnTokens(client, Number(ordinal));
    await client.query('UPDATE turns SET prompt_base_ordinal = NULL, prompt_prefix_length = 0, prompt_suffix = $1 WHERE ordinal = $2', [
      encodeInt32Blob(promptTokenIds, 'promptTokenIds'),
      ordinal,
    ]);
  }

  const count = async (sql: string, values: unknown[] = [ordinals]): Promise<number> => Number((await client.query<{ value: string }>(sql, values)).rows[0]?.value ?? 0);
  const remove = async (sql: string, values: unknown[] = [ordinals]): Promise<number> => (await client.query(sql, values)).rowCount ?? 0;
  // What a user or tenant said about others' turns is theirs too.
  const owner = ownerOf(target);
  const ownFeedback = `turn_ordinal = ANY($1::bigint[]) OR ${owner?.column ?? 'tenant'} = $2`;
  const withOwner = [ordinals, owner?.name ?? null];
  const hints =
    (await count('SELECT count(*) AS value FROM judgements WHERE hint IS NOT NULL AND turn_ordinal = ANY($1::bigint[])')) +
    (await count(`SELECT count(*) AS value FROM feedback WHERE hint IS NOT NULL AND (${ownFeedback})`, withOwner));
  const nextStates = await count('SELECT count(*) AS value FROM turns WHERE next_state IS NOT NULL AND ordinal = ANY($1::bigint[])');
  const queued = (await remove('DELETE FROM judge_queue WHERE turn_ordinal = ANY($1::bigint[])')) + samples.filter((sample) => sample.leased).length;
  const judgements = await remove('DELETE FROM judgements WHERE turn_ordinal = ANY($1::bigint[])');
  const erasedSamples = await remove('DELETE FROM samples WHERE turn_ordinal = ANY($1::bigint[])');
  const feedback = await remove(`DELETE FROM feedback WHERE ${ownFeedback}`, withOwner);
  const erasedTurns = await remove('DELETE FROM turns WHERE ordinal = ANY($1::bigint[])');
  const memoryEntries = await erasePostgresMemory(client, turns.map((turn) => turn.id), memoryOwnerOf(target));
  const messages = await pruneMessageNodes(client, [...new Set(turns.flatMap((turn) => (turn.messages_tip_id === null ? [] : [turn.messages_tip_id])))]);
  await client.query('DELETE FROM tool_sets WHERE id = ANY($1::bigint[]) AND NOT EXISTS (SELECT 1 FROM turns WHERE turns.tool_set_id = tool_sets.id)', [
    [...new Set(turns.map((turn) => turn.tool_set_id))],
  ]);
  const sessionIds = await selectSessions(client, target);
  const sessions = await remove('DELETE FROM sessions WHERE id = ANY($1::text[])', [sessionIds]);
  await client.query(`
    WITH seeded (name, value) AS (${postgresCounterSeed}),
      replaced AS (DELETE FROM record_count_deltas WHERE name IN (SELECT name FROM seeded))
    INSERT INTO record_count_deltas (name, delta) SELECT name, value FROM seeded`);

  const erasedBy = new Map(trainedOn.map((row) => [Number(row.version), row.erased]));
  const affectedVersions = taintedVersionsOf(await versionParents(client), erasedBy.keys());
  for (const version of affectedVersions) {
    await client.query(
      `INSERT INTO policy_taints (version, erased_samples, marked_at) VALUES ($1, $2, $3)
       ON CONFLICT (version) DO UPDATE SET erased_samples = policy_taints.erased_samples + excluded.erased_samples`,
      [version, erasedBy.get(version) ?? 0, at],
    );
  }
  const erased: ErasedCounts = { sessions, turns: erasedTurns, messages, nextStates, judgements, feedback, hints, samples: erasedSamples, queued, memoryEntries };
  return {
    receipt: { target, erasedAt: at, erased, trainedOnErased: [...erasedBy.keys()].sort((a, b) => a - b), affectedVersions, storageWiped: false },
    sessionIds: [...new Set([...sessionIds, ...turns.map((turn) => turn.session_id)])],
    turnIds: turns.map((turn) => turn.id),
    sampleIds,
  };
}

/** The tables an erasure deletes from, vacuumed after it. */
export const erasedTables = ['judge_queue', 'judgements', 'samples', 'feedback', 'turns', 'message_nodes', 'tool_sets', 'sessions', 'user_memory'] as const;

export async function listPostgresTaintedVersions(client: Queryable): Promise<TaintedVersion[]> {
  const direct = (await client.query<{ version: string }>('SELECT DISTINCT version FROM policy_lineage WHERE erased_at IS NOT NULL')).rows;
  const marks = new Map(
    (await client.query<{ version: string; erased_samples: number; marked_at: string; retired_at: string | null }>('SELECT * FROM policy_taints')).rows.map((row) => [Number(row.version), row]),
  );
  const tainted = taintedVersionsOf(await versionParents(client), [...direct.map((row) => Number(row.version)), ...marks.keys()]);
  return tainted.map((version) => {
    const mark = marks.get(version);
    return {
      version,
      erasedSamples: mark?.erased_samples ?? 0,
      markedAt: mark === undefined ? null : Number(mark.marked_at),
      retiredAt: mark?.retired_at == null ? null : Number(mark.retired_at),
    };
  });
}

export async function retirePostgresVersions(client: Queryable, versions: readonly PolicyVersion[], at: number): Promise<number> {
  const result = await client.query(
    `INSERT INTO policy_taints (version, erased_samples, marked_at, retired_at) SELECT unnest($1::bigint[]), 0, $2, $2
     ON CONFLICT (version) DO UPDATE SET retired_at = excluded.retired_at WHERE policy_taints.retired_at IS NULL`,
    [versions, at],
  );
  return result.rowCount ?? 0;
}

export async function requeuePostgresSamplesOf(client: Queryable, versions: readonly PolicyVersion[], at: number): Promise<number> {
  // A turn trains on one ready sample at a time (samples_one_ready_per_turn): its newest, unless it has a ready one already.
  const result = await client.query(
    `UPDATE samples SET status = 'ready', training_step = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = $2
     WHERE ordinal IN (
       SELECT max(sample.ordinal) FROM samples AS sample JOIN policy_lineage AS lineage ON lineage.sample_id = sample.id
       WHERE lineage.erased_at IS NULL AND lineage.version = ANY($1::bigint[]) AND sample.status = 'trained'
         AND NOT EXISTS (SELECT 1 FROM samples AS ready WHERE ready.turn_ordinal = sample.turn_ordinal AND ready.status = 'ready')
       GROUP BY sample.turn_ordinal)`,
    [versions, at],
  );
  return result.rowCount ?? 0;
}

export async function listPostgresLineage(client: Queryable, version: PolicyVersion): Promise<{ sampleId: string; erased: boolean }[]> {
  const { rows } = await client.query<{ sample_id: string; erased_at: string | null }>('SELECT sample_id, erased_at FROM policy_lineage WHERE version = $1 ORDER BY sample_id', [version]);
  return rows.map((row) => ({ sampleId: row.sample_id, erased: row.erased_at !== null }));
}
