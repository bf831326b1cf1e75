/**
 * Overview: traffic, judging, samples, training and the served version, polled every few seconds.
 * The judge queue's depth has no history in the store, so its chart covers the time this page has
 * been open; every other chart reads its window from the store. With a tenant's key the server
 * answers the tenant's own counts only (its charts would add up every tenant's traffic).
 */
import { useRef } from 'preact/hooks';
import type { OverviewResponse, TenantOverviewResponse } from '../../gateway/admin/dashboard-api.js';
import { LineChart } from './line-chart.js';
import { palette } from './palette.js';
import { usePolling } from './use-polling.js';

const refreshMs = 3_000;

function Stat(props: { label: string; value: string | number; testId?: string }) {
  return (
    <div class="stat">
      <div class="stat-value" data-testid={props.testId}>{props.value}</div>
      <div class="stat-label">{props.label}</div>
    </div>
  );
}

function seconds(milliseconds: number): number {
  return milliseconds / 1000;
}

export function OverviewPage(props: { onRefused: () => void }) {
  const queue = useRef<{ at: number[]; depth: number[] }>({ at: [], depth: [] });
  const { data, error } = usePolling<OverviewResponse | TenantOverviewResponse>('/admin/dashboard/overview?window=3600000&bucket=60000', refreshMs, props.onRefused, (overview) => {
    if (overview.tenant !== null) return;
    queue.current.at.push(seconds(overview.now));
    queue.current.depth.push(overview.status.judging.pending);
    if (queue.current.at.length > 1200) {
      queue.current.at.shift();
      queue.current.depth.shift();
    }
  });
  if (data === null) return <p class="muted">{error ?? 'Loading…'}</p>;
  if (data.tenant !== null) return <TenantOverview overview={data} error={error} />;
  const { status, series, training } = data;
  const buckets = series.buckets;
  const x = buckets.map((bucket) => seconds(bucket.at));
  const sources = [...new Set(series.samples.map((bucket) => bucket.source))];
  const sampleTimes = [...new Set(series.samples.map((bucket) => bucket.at))].sort((a, b) => a - b);
  const sampleLines = sources.flatMap((source) =>
    (['ready', 'trained', 'stale', 'dropped'] as const).map((outcome) => ({
      label: sources.length > 1 ? `${outcome} (${source})` : outcome,
      values: sampleTimes.map((at) => series.samples.find((bucket) => bucket.at === at && bucket.source === source)?.[outcome] ?? 0),
    })),
  );
  const activations = series.activations.length === 0 ? [{ version: status.policyVersion, at: data.since }] : series.activations;
  const window: [number, number] = [seconds(data.since), seconds(data.now)];
  const versionX = [...activations.map((activation) => seconds(Math.max(activation.at, data.since))), seconds(data.now)];
  const versionY = [...activations.map((activation) => activation.version), activations.at(-1)?.version ?? status.policyVersion];
  return (
    <section>
      {error === null ? null : <p class="error">{error}</p>}
      <div class="stats">
        <Stat label="main turns" value={status.turns.main} testId="turn-count" />
        <Stat label="side turns" value={status.turns.side} />
        <Stat label="sessions" value={status.sessions} />
        <Stat label="judged" value={status.judged} />
        <Stat label="judge queue" value={status.judging.pending} />
        <Stat label="vote agreement" value={status.judging.voteAgreement === null ? '–' : status.judging.voteAgreement.toFixed(2)} />
        <Stat label="samples ready" value={status.samples.ready} />
        <Stat label="samples trained" value={status.samples.trained} />
        <Stat label="training steps" value={status.trainSteps} />
        <Stat label="served version" value={status.policyVersion} testId="served-version" />
      </div>
      <div class="charts">
        <LineChart
          title="Turns per minute" xRange={window} yTicks="integer"
          lines={[{ label: 'main', color: palette.blue }, { label: 'side', color: palette.grey }]}
          data={[x, buckets.map((bucket) => bucket.mainTurns), buckets.map((bucket) => bucket.sideTurns)]}
        />
        <LineChart title="Judge queue depth (since this page opened)" yTicks="integer" xRange={[Math.min(queue.current.at[0] ?? window[1], window[1] - 60), window[1]]} lines={[{ label: 'queued', color: palette.orange }]} data={[queue.current.at, queue.current.depth]} />
        <LineChart
          title="Judge score and vote agreement per minute" xRange={window}
          lines={[{ label: 'mean score', color: palette.green }, { label: 'vote agreement', color: palette.purple }]}
          yRange={[-1, 1]}
          data={[
            x,
            buckets.map((bucket) => bucket.meanScore),
            buckets.map((bucket) => (bucket.readableVotes === 0 ? null : bucket.agreeingVotes / bucket.readableVotes)),
          ]}
        />
        <LineChart
          title="Samples per minute by outcome" xRange={window} yTicks="integer"
          lines={sampleLines.map((line, position) => ({ label: line.label, color: palette.series[position % palette.series.length] ?? palette.grey }))}
          data={[sampleTimes.map(seconds), ...sampleLines.map((line) => line.values)]}
        />
        <LineChart
          title="Training loss, KL and clip fraction by step"
          xKind="number"
          xLabel="step"
          xTicks="integer"
          lines={[{ label: 'loss', color: palette.red }, { label: 'KL / anchor', color: palette.blue }, { label: 'clip fraction', color: palette.orange }]}
          data={[training.map((point) => point.step), training.map((point) => point.loss), training.map((point) => point.kl ?? point.anchorKl), training.map((point) => point.clipFraction)]}
        />
        <LineChart
          title="Learning rate by step"
          xKind="number"
          xLabel="step"
          xTicks="integer"
          yTicks="exponential"
          lines={[{ label: 'learning rate', color: palette.purple }]}
          data={[training.map((point) => point.step), training.map((point) => point.learningRate)]}
        />
        <LineChart title="Served policy version" xRange={window} yTicks="integer" lines={[{ label: 'version', color: palette.green, stepped: true }]} data={[versionX, versionY]} />
      </div>
    </section>
  );
}

function TenantOverview(props: { overview: TenantOverviewResponse; error: string | null }) {
  const { status } = props.overview;
  return (
    <section>
      {props.error === null ? null : <p class="error">{props.error}</p>}
      <p class="muted" data-testid="tenant-scope">
        Tenant <strong>{status.tenant}</strong>: its own sessions, turns and feedback. Judging, samples, training and the charts add up every
        tenant's traffic and need the admin key.
      </p>
      <div class="stats">
        <Stat label="main turns" value={status.turns.main} testId="turn-count" />
        <Stat label="side turns" value={status.turns.side} />
        <Stat label="sessions" value={status.sessions} testId="session-count" />
        <Stat label="open sessions" value={status.sessionsOpen} />
        <Stat label="feedback sent" value={status.feedback} />
        <Stat label="served version" value={status.policyVersion} testId="served-version" />
      </div>
    </section>
  );
}
