/**
 * The SQLite store's `DashboardQueries`. Each query reads one index range (migration 7 adds the
 * indexes), so a dashboard refresh costs what its window or page holds, not what the store holds.
 */
import type Database from 'better-sqlite3';
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

const searchFilter = "(id LIKE @pattern ESCAPE '\\' OR tenant = @search OR user_id = @search)";
const pageOrder = 'ORDER BY created_at DESC, id DESC LIMIT @limit';

type Run = <T>(operation: string, work: () => T) => Promise<T>;

interface Window {
  since: number;
  until: number;
  bucket: number;
}

export function createSqliteDashboardQueries(database: Database.Database, run: Run): DashboardQueries {
  // Four statements, not one with `? IS NULL OR ...`: SQLite plans an index range only for the
  // conditions it sees, so each page is a seek into sessions_by_created_id, never a skip.
  const sessionPages = {
    first: database.prepare(`SELECT ${sessionSummaryColumns} FROM sessions ${pageOrder}`),
    after: database.prepare(`SELECT ${sessionSummaryColumns} FROM sessions WHERE (created_at, id) < (@createdAt, @id) ${pageOrder}`),
    firstMatching: database.prepare(`SELECT ${sessionSummaryColumns} FROM sessions WHERE ${searchFilter} ${pageOrder}`),
    afterMatching: database.prepare(
      `SELECT ${sessionSummaryColumns} FROM sessions WHERE (created_at, id) < (@createdAt, @id) AND ${searchFilter} ${pageOrder}`,
    ),
    // A tenant's view: its own sessions only, the search then matching ids alone.
    ofTenant: database.prepare(`
      SELECT ${sessionSummaryColumns} FROM sessions WHERE tenant = @tenant AND (@user IS NULL OR user_id = @user)
        AND (@createdAt IS NULL OR (created_at, id) < (@createdAt, @id)) AND (@pattern IS NULL OR id LIKE @pattern ESCAPE '\\')
      ${pageOrder}`),
  };
  const tenantCounts = database.prepare<{ tenant: string }, { open: number; closed: number; main: number; side: number; feedback: number }>(`
    SELECT
      (SELECT count(*) FROM sessions WHERE tenant = @tenant AND status = 'open') AS open,
      (SELECT count(*) FROM sessions WHERE tenant = @tenant AND status = 'closed') AS closed,
      (SELECT count(*) FROM turns WHERE tenant = @tenant AND type = 'main') AS main,
      (SELECT count(*) FROM turns WHERE tenant = @tenant AND type = 'side') AS side,
      (SELECT count(*) FROM feedback WHERE tenant = @tenant) AS feedback`);
  // `%` works in integers (a bound number is a REAL, and `/` would divide as one).
  const turnBuckets = database.prepare<Window, { at: number; main: number; side: number }>(`
    SELECT started_at - started_at % @bucket AS at, sum(type = 'main') AS main, sum(type = 'side') AS side
    FROM turns WHERE started_at >= @since AND started_at < @until GROUP BY 1 ORDER BY 1`);
  const judgementBuckets = database.prepare<
    Window,
    { at: number; judgements: number; mean_score: number | null; agreeing: number; readable: number }
  >(`
    SELECT created_at - created_at % @bucket AS at, count(*) AS judgements, avg(score) AS mean_score,
      sum(agreeing_votes) AS agreeing, sum(readable_votes) AS readable
    FROM judgements WHERE created_at >= @since AND created_at < @until GROUP BY 1 ORDER BY 1`);
  const sampleBuckets = database.prepare<
    Window,
    { at: number; source: string; status: string; drop_reason: string | null; samples: number }
  >(`
    SELECT sample.created_at - sample.created_at % @bucket AS at,
      CASE WHEN feedback.rollout IS NULL THEN 'live' ELSE 'rollout' END AS source, sample.status, sample.drop_reason, count(*) AS samples
    FROM samples AS sample LEFT JOIN feedback ON feedback.id = sample.feedback_id
    WHERE sample.created_at >= @since AND sample.created_at < @until GROUP BY 1, 2, 3, 4 ORDER BY 1`);
  const activationBefore = database.prepare<[number], { version: number; at: number }>(
    'SELECT version, activated_at AS at FROM policy_activations WHERE activated_at < ? ORDER BY activated_at DESC, id DESC LIMIT 1',
  );
  const activationsWithin = database.prepare<[number, number], { version: number; at: number }>(
    'SELECT version, activated_at AS at FROM policy_activations WHERE activated_at >= ? AND activated_at < ? ORDER BY activated_at, id',
  );
  const policyScores = database.prepare<[number, number], { version: number; scored: number; mean_score: number | null }>(`
    SELECT policy_version AS version, count(*) AS scored, avg(score) AS mean_score FROM samples
    WHERE policy_version BETWEEN ? AND ? AND score IS NOT NULL AND (drop_reason IS NULL OR drop_reason <> 'superseded')
    GROUP BY policy_version ORDER BY policy_version`);
  // The page's ids as one JSON array: one statement whatever the page's length.
  const turnJudgings = database.prepare<[string], TurnJudgingRow>(turnJudgingSelect('turn.id IN (SELECT value FROM json_each(?))'));

  return {
    async tenantCounts(tenant: string): Promise<TenantCounts> {
      return run('tenantCounts', () => {
        const row = tenantCounts.get({ tenant });
        return { sessions: { open: row?.open ?? 0, closed: row?.closed ?? 0 }, turns: { main: row?.main ?? 0, side: row?.side ?? 0 }, feedback: row?.feedback ?? 0 };
      });
    },

    async listSessionSummaries(options: ListSessionSummariesOptions): Promise<SessionSummary[]> {
      return run('listSessionSummaries', () => {
        const search = options.search === undefined || options.search === '' ? null : options.search;
        const cursor = options.after ?? null;
        if (options.tenant !== undefined) {
          const rows = sessionPages.ofTenant.all({
            tenant: options.tenant,
            user: options.user ?? null,
            limit: options.limit,
            createdAt: cursor?.createdAt ?? null,
            id: cursor?.id ?? null,
            pattern: search === null ? null : likePrefixPattern(search),
          });
          return (rows as SessionSummaryRow[]).map(sessionSummaryOf);
        }
        const statement =
          search === null ? (cursor === null ? sessionPages.first : sessionPages.after) : cursor === null ? sessionPages.firstMatching : sessionPages.afterMatching;
        const parameters = {
          limit: options.limit,
          ...(cursor === null ? {} : { createdAt: cursor.createdAt, id: cursor.id }),
          ...(search === null ? {} : { search, pattern: likePrefixPattern(search) }),
        };
        return (statement.all(parameters) as SessionSummaryRow[]).map(sessionSummaryOf);
      });
    },

    async activitySeries(options: ActivitySeriesOptions): Promise<ActivitySeries> {
      return run('activitySeries', () => {
        const window: Window = { since: options.since, until: options.until, bucket: options.bucketMs };
        const before = activationBefore.get(options.since);
        return {
          buckets: activityBucketsOf(turnBuckets.all(window), judgementBuckets.all(window)),
          samples: sampleBucketOf(sampleBuckets.all(window)),
          activations: [...(before === undefined ? [] : [before]), ...activationsWithin.all(options.since, options.until)],
        };
      });
    },

    async policyTurnScores(options: { from: PolicyVersion; to: PolicyVersion }): Promise<PolicyTurnScore[]> {
      return run('policyTurnScores', () =>
        policyScores.all(options.from, options.to).map((row) => ({ version: row.version, scoredTurns: row.scored, meanScore: row.mean_score })),
      );
    },

    async turnJudgings(turnIds: readonly string[]): Promise<TurnJudgingSummary[]> {
      if (turnIds.length === 0) return [];
      return run('turnJudgings', () => turnJudgingsOf(turnJudgings.all(JSON.stringify(turnIds)), turnIds));
    },
  };
}
