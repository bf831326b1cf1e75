/** Experiments: the charts of `eval personalize` and `rollout` runs under the server's `--results-dir`. */
import type { ExperimentsResponse } from '../../gateway/admin/dashboard-api.js';
import { LineChart } from './line-chart.js';
import { palette } from './palette.js';
import { usePolling } from './use-polling.js';

export function ExperimentsPage(props: { onRefused: () => void }) {
  const { data, error, needsAdminKey } = usePolling<ExperimentsResponse>('/admin/dashboard/experiments', 30_000, props.onRefused);
  if (needsAdminKey) return <p class="muted" data-testid="needs-admin-key">{error}</p>;
  if (data === null) return <p class="muted">{error ?? 'Loading…'}</p>;
  if (data.resultsDir === null) return <p class="muted">Start the server with <code>--results-dir &lt;folder&gt;</code> to see the runs written there.</p>;
  if (data.data.length === 0) return <p class="muted">No result files under {data.resultsDir} yet.</p>;
  return (
    <section>
      <p class="muted">Runs under {data.resultsDir}</p>
      {data.data.map((chart) => {
        const xs = [...new Set(chart.lines.flatMap((line) => line.points.map(([x]) => x)))].sort((a, b) => a - b);
        const columns = chart.lines.map((line) => {
          const byX = new Map(line.points);
          return xs.map((x) => byX.get(x) ?? null);
        });
        const lines = chart.lines.map((line, position) => ({ label: line.label, color: palette.series[position % palette.series.length] ?? palette.grey, stepped: chart.kind === 'personalize' }));
        const withThreshold = chart.threshold === null ? lines : [...lines, { label: `threshold ${chart.threshold}`, color: palette.grey, dashed: true }];
        const thresholdColumn = chart.threshold === null ? [] : [xs.map(() => chart.threshold)];
        const headers = [...new Set(chart.rows.flatMap((row) => Object.keys(row)))];
        return (
          <article key={chart.title} class="experiment">
            <LineChart title={chart.title} xKind="number" xLabel={chart.xLabel} xTicks="integer" lines={withThreshold} data={[xs, ...columns, ...thresholdColumn]} width={720} height={280} />
            <table class="list">
              <thead><tr>{headers.map((header) => <th key={header}>{header}</th>)}</tr></thead>
              <tbody>
                {chart.rows.map((row, position) => (
                  <tr key={position}>{headers.map((header) => <td key={header}>{row[header] ?? '–'}</td>)}</tr>
                ))}
              </tbody>
            </table>
          </article>
        );
      })}
    </section>
  );
}
