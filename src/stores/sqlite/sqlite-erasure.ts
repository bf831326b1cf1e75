/**
 * Erasure in the SQLite record store (the `RecordErasure` role, `spec/record-erasure.ts`). `eraseRows`
 * runs inside one write of the group commit; the store then truncates the WAL, so with
 * `secure_delete` on (set for the erasure's connection) the deleted bytes are zeroed in the pages and
 * no older copy survives in the WAL.
 *
 * Order matters: the surviving turns whose prompt was stored as a prefix of an erased turn's are
 * rewritten whole first (their ids rebuilt while the base still exists), then the rows that point at
 * turns go, then the turns, then the message nodes and tool lists no remaining turn uses, then the
 * sessions. The counters are recounted from the rows last: the triggers follow inserts and updates,
 * not these deletes.
 */
import type Database from 'better-sqlite3';
import { taintedVersionsOf, type VersionParent } from '../../core/tainted-versions.js';
import { encodeInt32Blob } from '../../core/token-blob-codec.js';
import type { ErasedCounts, ErasureResult, ErasureTarget, TaintedVersion } from '../../spec/record-erasure.js';
import { memoryOwnerOf, ownerOf } from '../erasure-owner.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';
import { sqliteCounterSeed } from './sqlite-counter-migration.js';
import type { SqliteTurnReader } from './sqlite-turn-reader.js';
import { eraseSqliteMemory } from './sqlite-user-memory.js';

interface ErasedTurnRow {
  ordinal: number;
  id: string;
  session_id: string;
  messages_tip_id: number | null;
  tool_set_id: number;
}

const turnColumns = 'ordinal, id, session_id, messages_tip_id, tool_set_id';
// A JSON array bound as one parameter: erasures name any number of rows, and SQLite's
// bound-parameter limit would cap an IN list.
const erasedOrdinals = '(SELECT value FROM json_each(@ordinals))';

/**
 * Turns an erasure of a period (`--retain-days`, `--before`) takes per transaction: the SQLite store
 * runs on the server's event loop, so a first retention run over a large old store goes in batches
 * with requests served between them, not in one long transaction.
 */
export const erasureBatchTurns = 500;

function selectTurns(database: Database.Database, target: ErasureTarget): ErasedTurnRow[] {
  switch (target.kind) {
    case 'session':
      return database.prepare<[string], ErasedTurnRow>(`SELECT ${turnColumns} FROM turns WHERE session_id = ?`).all(target.sessionId);
    case 'user':
    case 'tenant': {
      // A turn names the user and tenant whose key sent it, which may differ from the one that opened its session.
      const { column, name } = ownerOf(target);
      return database
        .prepare<[string, string], ErasedTurnRow>(`SELECT ${turnColumns} FROM turns WHERE ${column} = ? OR session_id IN (SELECT id FROM sessions WHERE ${column} = ?)`)
        .all(name, name);
    }
    case 'before':
      return database
        .prepare<[number, number], ErasedTurnRow>(`SELECT ${turnColumns} FROM turns WHERE started_at < ? ORDER BY ordinal LIMIT ?`)
        .all(target.before, erasureBatchTurns);
  }
}

function selectSessions(database: Database.Database, target: ErasureTarget): string[] {
  const ids = (statement: Database.Statement<unknown[], { id: string }>, ...values: unknown[]) => statement.all(...values).map((row) => row.id);
  switch (target.kind) {
    case 'session':
      return ids(database.prepare('SELECT id FROM sessions WHERE id = ?'), target.sessionId);
    case 'user':
    case 'tenant': {
      const { column, name } = ownerOf(target);
      return ids(database.prepare(`SELECT id FROM sessions WHERE ${column} = ?`), name);
    }
    case 'before':
      // A session goes once nothing of it is left and it was last touched before the cut.
      return ids(database.prepare('SELECT id FROM sessions WHERE updated_at < ? AND NOT EXISTS (SELECT 1 FROM turns WHERE turns.session_id = sessions.id)'), target.before);
  }
}

/** Deletes the message nodes of `tips`' paths that no remaining turn or node uses; returns how many. */
function pruneMessageNodes(database: Database.Database, tips: readonly number[]): number {
  if (tips.length === 0) return 0;
  const path = database
    .prepare<{ tips: string }, { id: number }>(`
      WITH RECURSIVE path (id) AS (
        SELECT value FROM json_each(@tips)
        UNION
        SELECT node.parent_id FROM message_nodes AS node JOIN path ON node.id = path.id WHERE node.parent_id IS NOT NULL
      )
      SELECT id FROM path ORDER BY id DESC
    `)
    .all({ tips: JSON.stringify(tips) });
  const used = database.prepare<{ id: number }, { used: number }>(`
    SELECT EXISTS (SELECT 1 FROM turns WHERE messages_tip_id = @id) OR EXISTS (SELECT 1 FROM message_nodes WHERE parent_id = @id) AS used
  `);
  const remove = database.prepare<[number]>('DELETE FROM message_nodes WHERE id = ?');
  let removed = 0;
  // A child's id is above its parent's (the parent existed when it was inserted), so going down the
  // ids frees a node's children before the node is asked whether anything still uses it.
  for (const { id } of path) {
    if (used.get({ id })?.used === 1) continue;
    removed += remove.run(id).changes;
  }
  return removed;
}

/** Rewrites whole the prompts of remaining turns stored as a prefix of an erased turn's sequence. */
function unchainSurvivors(database: Database.Database, reader: SqliteTurnReader, ordinals: string): void {
  const survivors = database
    .prepare<{ ordinals: string }, { ordinal: number }>(`SELECT ordinal FROM turns WHERE prompt_base_ordinal IN ${erasedOrdinals} AND ordinal NOT IN ${erasedOrdinals}`)
    .all({ ordinals });
  const rewrite = database.prepare<[Buffer, number]>('UPDATE turns SET prompt_base_ordinal = NULL, prompt_prefix_length = 0, prompt_suffix = ? WHERE ordinal = ?');
  const prompts = survivors.map(({ ordinal }) => ({ ordinal, prompt: reader.tokens(ordinal).promptTokenIds }));
  for (const { ordinal, prompt } of prompts) rewrite.run(encodeInt32Blob(prompt, 'promptTokenIds'), ordinal);
}

function versionParents(database: Database.Database): VersionParent[] {
  return database.prepare<[], VersionParent>('SELECT version, parent FROM policy_versions').all();
}

/** Erases what `target` names, inside the caller's transaction. */
export function eraseSqliteRows(database: Database.Database, reader: SqliteTurnReader, target: ErasureTarget, at: number): ErasureResult {
  const turns = selectTurns(database, target);
  const ordinals = JSON.stringify(turns.map((turn) => turn.ordinal));
  const bound = { ordinals };
  const samples = database
    .prepare<{ ordinals: string }, { id: string; leased: number }>(`SELECT id, lease_owner IS NOT NULL AS leased FROM samples WHERE turn_ordinal IN ${erasedOrdinals}`)
    .all(bound);
  const sampleIds = JSON.stringify(samples.map((sample) => sample.id));
  database.prepare<[number, string]>('UPDATE policy_lineage SET erased_at = ? WHERE erased_at IS NULL AND sample_id IN (SELECT value FROM json_each(?))').run(at, sampleIds);
  const trainedOn = database
    .prepare<[string], { version: number; erased: number }>('SELECT version, count(*) AS erased FROM policy_lineage WHERE sample_id IN (SELECT value FROM json_each(?)) GROUP BY version')
    .all(sampleIds);

  unchainSurvivors(database, reader, ordinals);
  const count = (sql: string, values: object = bound): number => database.prepare<object, { value: number }>(sql).get(values)?.value ?? 0;
  const run = (sql: string, values: object = bound): number => database.prepare<object>(sql).run(values).changes;
  // What a user or tenant said about others' turns is theirs too.
  const owner = ownerOf(target);
  const ownFeedback = `turn_ordinal IN ${erasedOrdinals} OR ${owner?.column ?? 'tenant'} = @owner`;
  const withOwner = { ...bound, owner: owner?.name ?? null };
  const hints =
    count(`SELECT count(*) AS value FROM judgements WHERE hint IS NOT NULL AND turn_ordinal IN ${erasedOrdinals}`) +
    count(`SELECT count(*) AS value FROM feedback WHERE hint IS NOT NULL AND (${ownFeedback})`, withOwner);
  const queued = run(`DELETE FROM judge_queue WHERE turn_ordinal IN ${erasedOrdinals}`) + samples.filter((sample) => sample.leased === 1).length;
  const judgements = run(`DELETE FROM judgements WHERE turn_ordinal IN ${erasedOrdinals}`);
  const erasedSamples = run(`DELETE FROM samples WHERE turn_ordinal IN ${erasedOrdinals}`);
  const feedback = run(`DELETE FROM feedback WHERE ${ownFeedback}`, withOwner);
  const nextStates = run(`DELETE FROM turn_next_states WHERE turn_ordinal IN ${erasedOrdinals}`);
  const memoryEntries = eraseSqliteMemory(database, turns.map((turn) => turn.id), memoryOwnerOf(target));
  const erasedTurns = run(`DELETE FROM turns WHERE ordinal IN ${erasedOrdinals}`);
  const messages = pruneMessageNodes(database, [...new Set(turns.flatMap((turn) => (turn.messages_tip_id === null ? [] : [turn.messages_tip_id])))]);
  const removeToolSet = database.prepare<[number, number]>('DELETE FROM tool_sets WHERE id = ? AND NOT EXISTS (SELECT 1 FROM turns WHERE tool_set_id = ?)');
  for (const id of new Set(turns.map((turn) => turn.tool_set_id))) removeToolSet.run(id, id);
  const sessionIds = selectSessions(database, target);
  const removeSession = database.prepare<[string]>('DELETE FROM sessions WHERE id = ?');
  const sessions = sessionIds.reduce((removed, id) => removed + removeSession.run(id).changes, 0);
  database.exec(`INSERT OR REPLACE INTO record_counts (name, value) ${sqliteCounterSeed}`);

  const markTaint = database.prepare<[number, number, number]>(`
    INSERT INTO policy_taints (version, erased_samples, marked_at) VALUES (?, ?, ?)
    ON CONFLICT (version) DO UPDATE SET erased_samples = erased_samples + excluded.erased_samples
  `);
  const erasedBy = new Map(trainedOn.map((row) => [row.version, row.erased]));
  const affectedVersions = taintedVersionsOf(versionParents(database), erasedBy.keys());
  for (const version of affectedVersions) markTaint.run(version, erasedBy.get(version) ?? 0, at);

  const erased: ErasedCounts = { sessions, turns: erasedTurns, messages, nextStates, judgements, feedback, hints, samples: erasedSamples, queued, memoryEntries };
  return {
    receipt: { target, erasedAt: at, erased, trainedOnErased: [...erasedBy.keys()].sort((a, b) => a - b), affectedVersions, storageWiped: false },
    sessionIds: [...new Set([...sessionIds, ...turns.map((turn) => turn.session_id)])],
    turnIds: turns.map((turn) => turn.id),
    sampleIds: samples.map((sample) => sample.id),
  };
}

/** The versions whose lineage holds an erased sample, with their marks. */
export function listSqliteTaintedVersions(database: Database.Database): TaintedVersion[] {
  const direct = database.prepare<[], { version: number }>('SELECT DISTINCT version FROM policy_lineage WHERE erased_at IS NOT NULL').all();
  const marks = new Map(
    database
      .prepare<[], { version: number; erased_samples: number; marked_at: number; retired_at: number | null }>('SELECT * FROM policy_taints')
      .all()
      .map((row) => [row.version, row]),
  );
  const tainted = taintedVersionsOf(versionParents(database), [...direct.map((row) => row.version), ...marks.keys()]);
  return tainted.map((version) => {
    const mark = marks.get(version);
    return { version, erasedSamples: mark?.erased_samples ?? 0, markedAt: mark?.marked_at ?? null, retiredAt: mark?.retired_at ?? null };
  });
}

export function retireSqliteVersions(database: Database.Database, versions: readonly PolicyVersion[], at: number): number {
  const retire = database.prepare<[number, number, number]>(`
    INSERT INTO policy_taints (version, erased_samples, marked_at, retired_at) VALUES (?, 0, ?, ?)
    ON CONFLICT (version) DO UPDATE SET retired_at = excluded.retired_at WHERE retired_at IS NULL
  `);
  return versions.reduce((retired, version) => retired + retire.run(version, at, at).changes, 0);
}

export function requeueSqliteSamplesOf(database: Database.Database, versions: readonly PolicyVersion[], at: number): number {
  // A turn trains on one ready sample at a time: its newest, unless it has a ready one already.
  return database
    .prepare<[number, string]>(`
      UPDATE samples SET status = 'ready', training_step = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
      WHERE ordinal IN (
        SELECT max(sample.ordinal) FROM samples AS sample JOIN policy_lineage AS lineage ON lineage.sample_id = sample.id
        WHERE lineage.erased_at IS NULL AND lineage.version IN (SELECT value FROM json_each(?)) AND sample.status = 'trained'
          AND NOT EXISTS (SELECT 1 FROM samples AS ready WHERE ready.turn_ordinal = sample.turn_ordinal AND ready.status = 'ready')
        GROUP BY sample.turn_ordinal)
    `)
    .run(at, JSON.stringify(versions)).changes;
}

export function listSqliteLineage(database: Database.Database, version: PolicyVersion): { sampleId: string; erased: boolean }[] {
  return database
    .prepare<[number], { sample_id: string; erased_at: number | null }>('SELECT sample_id, erased_at FROM policy_lineage WHERE version = ? ORDER BY sample_id')
    .all(version)
    .map((row) => ({ sampleId: row.sample_id, erased: row.erased_at !== null }));
}
