/** Row conversions the SQLite and Postgres dashboard queries share. */
import type { ActivityBucket, SampleBucket, SessionSummary } from '../spec/dashboard-queries.js';
import type { SessionStatus } from '../spec/records.js';

/** A LIKE pattern matching values that start with `prefix` (with `\` as the escape character). */
export function likePrefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/** Folds (bucket, source, status, drop reason, count) rows into one bucket per (bucket, source). */
export function sampleBucketOf(
  rows: readonly { at: number | string; source: string; status: string; drop_reason: string | null; samples: number | string }[],
): SampleBucket[] {
  const buckets = new Map<string, SampleBucket>();
  for (const row of rows) {
    const at = Number(row.at);
    const key = `${at}\u0000${row.source}`;
    const bucket = buckets.get(key) ?? { at, source: row.source, ready: 0, trained: 0, stale: 0, dropped: 0 };
    const samples = Number(row.samples);
    if (row.status === 'ready') bucket.ready += samples;
    else if (row.status === 'trained') bucket.trained += samples;
    else if (row.drop_reason === 'stale') bucket.stale += samples;
    else bucket.dropped += samples;
    buckets.set(key, bucket);
  }
  return [...buckets.values()].sort((a, b) => a.at - b.at || a.source.localeCompare(b.source));
}

/** A sessions row as both stores select it for the sessions list. */
export interface SessionSummaryRow {
  id: string;
  tenant: string | null;
  status: SessionStatus;
  created_at: number;
  updated_at: number;
  main_turns: number;
  side_turns: number;
}

export const sessionSummaryColumns = 'id, tenant, status, created_at, updated_at, main_turns, side_turns';

export function sessionSummaryOf(row: SessionSummaryRow): SessionSummary {
  return {
    id: row.id,
    tenant: row.tenant,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    mainTurns: row.main_turns,
    sideTurns: row.side_turns,
  };
}

/** One bucket per start time that has turns or judgements, from the two grouped queries' rows. */
export function activityBucketsOf(
  turns: readonly { at: number; main: number; side: number }[],
  judgements: readonly { at: number; judgements: number; mean_score: number | null; agreeing: number; readable: number }[],
): ActivityBucket[] {
  const judged = new Map(judgements.map((row) => [row.at, row]));
  const turnsAt = new Map(turns.map((row) => [row.at, row]));
  const starts = [...new Set([...turnsAt.keys(), ...judged.keys()])].sort((a, b) => a - b);
  return starts.map((at) => {
    const turn = turnsAt.get(at);
    const judgement = judged.get(at);
    return {
      at,
      mainTurns: turn?.main ?? 0,
      sideTurns: turn?.side ?? 0,
      judgements: judgement?.judgements ?? 0,
      meanScore: judgement?.mean_score ?? null,
      agreeingVotes: judgement?.agreeing ?? 0,
      readableVotes: judgement?.readable ?? 0,
    };
  });
}
