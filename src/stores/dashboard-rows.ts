/** Row conversions the SQLite and Postgres dashboard queries share. */
import type { SampleBucket } from '../spec/dashboard-queries.js';

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
