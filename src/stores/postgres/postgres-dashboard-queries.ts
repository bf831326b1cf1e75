/**
 * The Postgres store's `DashboardQueries`. Each query reads one index range (migration 6 adds the
 * indexes), so a dashboard refresh costs what its window or page holds, not what the store holds.
 */
import type {
  ActivitySeries,
  ActivitySeriesOptions,
  DashboardQueries,
  ListSessionSummariesOptions,
  TenantCounts,
  PolicyTurnScore,
  SessionSummary,
  TurnJudgingSummary,
} from '../../spec/dashboard-queries.js';
import type { PolicyVersion } from '../../spec/inference-engine.js';
import { activityBucketsOf, likePrefixPattern, sampleBucketOf, sessionSummaryColumns, sessionSummaryOf, type SessionSummaryRow } from '../dashboard-rows.js';
import { turnJudgingSelect, turnJudgingsOf, type TurnJudgingRow } from '../dashboard-rows.js';
import type { PostgresDatabase } from './postgres-database.js';

export function createPostgresDashboardQueries(database: PostgresDatabase): DashboardQueries {
  return {
    async tenantCounts(tenant: string): Promise<TenantCounts> {
      return database.run('tenantCounts', async () => {
        const [row] = await database.rows<{ open: string; closed: string; main: string; side: string; feedback: string }>(
          `SELECT
             (SELECT count(*) FROM sessions WHERE tenant = $1 AND status = 'open') AS open,
             (SELECT count(*) FROM sessions WHERE tenant = $1 AND status = 'closed') AS closed,
             (SELECT count(*) FROM turns WHERE tenant = $1 AND type = 'main') AS main,
             (SELECT count(*) FROM turns WHERE tenant = $1 AND type = 'side') AS side,
             (SELECT count(*) FROM feedback WHERE tenant = $1) AS feedback`,
          [tenant],
        );
        return {
          sessions: { open: Number(row?.open ?? 0), closed: Number(row?.closed ?? 0) },
          turns: { main: Number(row?.main ?? 0), side: Number(row?.side ?? 0) },
          feedback: Number(row?.feedback ?? 0),
        };
      });
    },

    async listSessionSummaries(options: ListSessionSummariesOptions): Promise<SessionSummary[]> {
      const search = options.search === undefined || options.search === '' ? null : options.search;
      const cursor = options.after ?? null;
      // The row comparison seeks into sessions_by_created_id; a null cursor compares nothing.
      return database.run('listSessionSummaries', async () => {
        const rows = await database.rows<SessionSummaryRow>(
          `SELECT ${sessionSummaryColumns} FROM sessions
           WHERE ($1::bigint IS NULL OR (created_at, id) < ($1::bigint, $2::text))
             AND ($3::text IS NULL OR id LIKE $4 OR ($6::text IS NULL AND (tenant = $3 OR user_id = $3)))
             AND ($6::text IS NULL OR tenant = $6) AND ($7::text IS NULL OR user_id = $7)
           ORDER BY created_at DESC, id DESC LIMIT $5`,
          [cursor?.createdAt ?? null, cursor?.id ?? null, search, search === null ? null : likePrefixPattern(search), options.limit, options.tenant ?? null, options.user ?? null],
        );
        return rows.map(sessionSummaryOf);
      });
    },

    async activitySeries(options: ActivitySeriesOptions): Promise<ActivitySeries> {
      const window = [options.since, options.until, options.bucketMs];
      return database.run('activitySeries', async () => {
        const [turns, judgements, samples, before, within] = await Promise.all([
          database.rows<{ at: number; main: number; side: number }>(
            `SELECT (started_at / $3::bigint) * $3::bigint AS at, count(*) FILTER (WHERE type = 'main') AS main,
               count(*) FILTER (WHERE type = 'side') AS side
             FROM turns WHERE started_at >= $1 AND started_at < $2 GROUP BY 1 ORDER BY 1`,
            window,
          ),
          database.rows<{ at: number; judgements: number; mean_score: number | null; agreeing: number; readable: number }>(
            `SELECT (created_at / $3::bigint) * $3::bigint AS at, count(*) AS judgements, avg(score)::float8 AS mean_score,
               sum(agreeing_votes)::bigint AS agreeing, sum(readable_votes)::bigint AS readable
             FROM judgements WHERE created_at >= $1 AND created_at < $2 GROUP BY 1 ORDER BY 1`,
            window,
          ),
          database.rows<{ at: number; source: string; status: string; drop_reason: string | null; samples: number }>(
            `SELECT (sample.created_at / $3::bigint) * $3::bigint AS at,
               CASE WHEN feedback.rollout IS NULL THEN 'live' ELSE 'rollout' END AS source, sample.status, sample.drop_reason, count(*) AS samples
             FROM samples AS sample LEFT JOIN feedback ON feedback.id = sample.feedback_id
             WHERE sample.created_at >= $1 AND sample.created_at < $2 GROUP BY 1, 2, 3, 4 ORDER BY 1`,
            window,
          ),
          database.rows<{ version: number; at: number }>(
            'SELECT version, activated_at AS at FROM policy_activations WHERE activated_at < $1 ORDER BY activated_at DESC, id DESC LIMIT 1',
            [options.since],
          ),
          database.rows<{ version: number; at: number }>(
            'SELECT version, activated_at AS at FROM policy_activations WHERE activated_at >= $1 AND activated_at < $2 ORDER BY activated_at, id',
            [options.since, options.until],
          ),
        ]);
        return {
          buckets: activityBucketsOf(turns, judgements),
          samples: sampleBucketOf(samples),
          activations: [...before, ...within],
        };
      });
    },

    async policyTurnScores(options: { from: PolicyVersion; to: PolicyVersion }): Promise<PolicyTurnScore[]> {
      return database.run('policyTurnScores', async () => {
        const rows = await database.rows<{ version: number; scored: number; mean_score: number | null }>(
          `SELECT policy_version AS version, count(*) AS scored, avg(score)::float8 AS mean_score FROM samples
           WHERE policy_version BETWEEN $1 AND $2 AND score IS NOT NULL AND (drop_reason IS NULL OR drop_reason <> 'superseded')
           GROUP BY policy_version ORDER BY policy_version`,
          [options.from, options.to],
        );
        return rows.map((row) => ({ version: row.version, scoredTurns: row.scored, meanScore: row.mean_score }));
      });
    },

    async turnJudgings(turnIds: readonly string[]): Promise<TurnJudgingSummary[]> {
      if (turnIds.length === 0) return [];
      return database.run('turnJudgings', async () =>
        turnJudgingsOf(await database.rows<TurnJudgingRow>(turnJudgingSelect('turn.id = ANY($1::text[])'), [[...turnIds]]), turnIds),
      );
    },
  };
}
