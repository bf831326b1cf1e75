/**
 * The results table of an out folder (`summary.md`): one row per user and method, over every
 * seed run into the folder. `sessionsToSuccess` of a run that never succeeded counts as later
 * than any session, so the median of three seeds is the middle run's (a number when at least two
 * of three succeeded).
 */
import type { PersonalizeMethod, PersonalizeResult } from './personalize-result.js';

const methodOrder: readonly PersonalizeMethod[] = ['combine', 'opd', 'rl', 'base'];
const userOrder: readonly string[] = ['student', 'ta', 'teacher'];

/** The median with `null` (never) ranked last; null when the middle run never succeeded. */
export function medianSessions(values: ReadonlyArray<number | null>): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((left, right) => (left ?? Number.POSITIVE_INFINITY) - (right ?? Number.POSITIVE_INFINITY));
  if (sorted.length % 2 === 1) return sorted[(sorted.length - 1) / 2] ?? null;
  const lower = sorted[sorted.length / 2 - 1] ?? null;
  const upper = sorted[sorted.length / 2] ?? null;
  return lower === null || upper === null ? null : (lower + upper) / 2;
}

function rank(order: readonly string[], value: string): number {
  const index = order.indexOf(value);
  return index < 0 ? order.length : index;
}

const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
const never = (value: number | null, sessions: number): string => (value === null ? `— (${sessions})` : String(value));

/** The user, and whom it shared its server with. */
function userLabelOf(result: PersonalizeResult): string {
  return result.sharedWith === undefined || result.sharedWith.length === 0 ? result.user : `${result.user} (with ${result.sharedWith.join(', ')})`;
}

export function personalizeSummaryTable(results: readonly PersonalizeResult[]): string {
  const groups = new Map<string, PersonalizeResult[]>();
  for (const result of results) {
    // A user that shared its server with others is its own row, beside its runs alone.
    const key = `${userLabelOf(result)}\u0000${result.method}`;
    groups.set(key, [...(groups.get(key) ?? []), result]);
  }
  const rows = [...groups.values()]
    .map((runs) => [...runs].sort((left, right) => left.seed - right.seed))
    .sort((left, right) => {
      const [a, b] = [left[0] as PersonalizeResult, right[0] as PersonalizeResult];
      return rank(userOrder, a.user) - rank(userOrder, b.user) || a.user.localeCompare(b.user) || rank(methodOrder, a.method) - rank(methodOrder, b.method);
    });
  const lines = [
    '| user | method | seeds | sessionsToSuccess (per seed) | median | paper criterion (per seed) | base probe | last probe (per seed) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const runs of rows) {
    const first = runs[0] as PersonalizeResult;
    const median = medianSessions(runs.map((run) => run.sessionsToSuccess));
    lines.push(
      [
        userLabelOf(first),
        first.method,
        runs.map((run) => run.seed).join(', '),
        runs.map((run) => `${never(run.sessionsToSuccess, run.sessions.length)}${run.stoppedWaiting == null ? '' : ' *'}`).join(', '),
        median === null ? 'not reached' : String(median),
        runs.map((run) => never(run.consecutiveCriterion, run.sessions.length)).join(', '),
        mean(runs.map((run) => run.baseProbeRate)).toFixed(2),
        runs.map((run) => (run.probe.at(-1)?.satisfactionRate ?? 0).toFixed(2)).join(', '),
      ].map((cell) => ` ${cell} `).join('|').replace(/^/, '|').concat('|'),
    );
  }
  lines.push(
    '',
    '`sessionsToSuccess`: the first session after which the served version\'s probe rate is at least ' +
      `${results[0]?.successThreshold ?? 0.8} and stays so to the end of the run; "— (N)" means not within the run's N sessions. ` +
      'Paper criterion: the session completing the first 3 consecutive satisfied first responses.',
  );
  if (results.some((result) => result.stoppedWaiting != null)) {
    lines.push('', '*: the run stopped waiting for the server to judge and train between sessions, so later sessions met less trained versions; rerun it on a less busy machine.');
  }
  return `${lines.join('\n')}\n`;
}

