/**
 * Policies: versions newest first with their lifecycle state and why, the gate's and canary's evidence,
 * their parent, step metrics and the mean reward of the turns they served; activate one (roll back or forward) after a confirmation; pause, resume or step training.
 */
import { useEffect, useState } from 'preact/hooks';
import type { PoliciesResponse, PolicyView, StatusView } from '../../gateway/admin/dashboard-api.js';
import { AdminKeyRefused, NeedsAdminKey, adminRequest } from './admin-client.js';
import { formatTime } from './format-time.js';
import { LineChart } from './line-chart.js';
import { palette } from './palette.js';

function figure(value: number | null | undefined, digits = 3): string {
  return value === null || value === undefined ? '–' : value.toFixed(digits);
}

/** The replay gate's and the canary watch's evidence, in a line each, with the rule that decided. */
function Evidence(props: { policy: PolicyView }) {
  const { gate, canary } = props.policy;
  return (
    <>
      {gate === null ? null : (
        <div class="policy-gate" data-testid="policy-gate">
          gate: <strong>{gate.decision}</strong> against version {gate.incumbent} · {gate.turns} turns of {gate.sessions} sessions · wins {gate.wins} ·
          losses {gate.losses} · ties {gate.ties} · p {figure(gate.pValue)} · mean score {figure(gate.candidateMeanScore, 2)} vs {figure(gate.incumbentMeanScore, 2)}
          <div class="muted">{gate.rule}</div>
        </div>
      )}
      {canary === null ? null : (
        <div class="policy-canary" data-testid="policy-canary">
          canary ({Math.round(canary.share * 100)}% of sessions): <strong>{canary.decision}</strong> · {canary.canary.turns} canary turns, mean{' '}
          {figure(canary.canary.meanScore, 2)} vs {figure(canary.incumbentCohort.meanScore, 2)} on version {canary.incumbent} · {canary.reason}
          <div class="muted">{canary.rule}</div>
        </div>
      )}
    </>
  );
}

export function PoliciesPage(props: { onRefused: () => void }) {
  const [policies, setPolicies] = useState<PolicyView[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [status, setStatus] = useState<StatusView | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [needsAdminKey, setNeedsAdminKey] = useState<string | null>(null);

  const fail = (caught: unknown) => {
    if (caught instanceof AdminKeyRefused) props.onRefused();
    else if (caught instanceof NeedsAdminKey) setNeedsAdminKey(caught.message);
    else setMessage(caught instanceof Error ? caught.message : String(caught));
  };
  const load = async (before: number | null) => {
    try {
      const [page, current] = await Promise.all([
        adminRequest<PoliciesResponse>(`/admin/dashboard/policies?limit=50${before === null ? '' : `&before=${before}`}`),
        adminRequest<StatusView>('/admin/status'),
      ]);
      setPolicies((previous) => (before === null ? page.data : [...previous, ...page.data]));
      setNext(page.next);
      setStatus(current);
    } catch (caught) {
      fail(caught);
    }
  };
  useEffect(() => {
    void load(null);
  }, []);

  const act = async (path: string, done: (body: Record<string, unknown>) => string) => {
    try {
      setMessage(done(await adminRequest<Record<string, unknown>>(path, { method: 'POST' })));
      await load(null);
    } catch (caught) {
      fail(caught);
    }
  };
  const activate = (version: number) => {
    setConfirming(null);
    void act(`/admin/policies/${version}/activate`, () => `Serving version ${version} from now on.`);
  };
  const training = status?.training;
  const oldestFirst = [...policies].reverse();
  if (needsAdminKey !== null) return <p class="muted" data-testid="needs-admin-key">{needsAdminKey}</p>;
  return (
    <section>
      <div class="controls">
        <span>
          Serving version <strong data-testid="active-version">{status?.policyVersion ?? '–'}</strong> · training{' '}
          {training?.enabled !== true ? 'off' : training.paused === true ? 'paused' : training.training === true ? 'stepping' : 'on'}
          {training?.trainEvery === undefined ? '' : ` · a step every ${training.trainEvery} samples`}
        </span>
        <button type="button" disabled={training?.enabled !== true} onClick={() => void act('/admin/training/pause', () => 'Training paused.')}>Pause</button>
        <button type="button" disabled={training?.enabled !== true} onClick={() => void act('/admin/training/resume', () => 'Training resumed.')}>Resume</button>
        <button
          type="button"
          disabled={training?.enabled !== true}
          onClick={() =>
            void act('/admin/training/step', (body) =>
              body.kind === 'trained' ? 'Trained one step.' : body.kind === 'all-stale' ? 'Every ready sample was too stale; none trained.' : 'No ready samples to train on.',
            )
          }
        >
          Step now
        </button>
      </div>
      {message === null ? null : <p class="notice" data-testid="policy-message">{message}</p>}
      <LineChart
        title="Mean reward of served turns by version"
        xKind="number"
        xLabel="version"
        xTicks="integer"
        yRange={[-1, 1]}
        lines={[{ label: 'mean reward', color: palette.green }]}
        data={[oldestFirst.map((policy) => policy.version), oldestFirst.map((policy) => policy.score?.meanScore ?? null)]}
      />
      <ol class="timeline">
        {policies.map((policy) => (
          <li key={policy.version} class={policy.active ? 'policy active' : 'policy'} data-version={policy.version}>
            <div class="policy-head">
              <strong>version {policy.version}</strong>
              <span class="muted"> · {policy.kind}{policy.parent === null ? '' : ` · from ${policy.parent}`}{policy.step === null ? '' : ` · step ${policy.step}`} · {formatTime(policy.createdAt)}</span>
              {policy.active ? <span class="badge">serving</span> : null}{' '}
              <span class={`badge state-${policy.state}`} data-testid="policy-state">{policy.state}</span>
            </div>
            {policy.stateReason === null ? null : <div class="muted" data-testid="policy-state-reason">{policy.stateReason}</div>}
            <Evidence policy={policy} />
            <div class="policy-metrics">
              samples {policy.samples} · loss {figure(policy.metrics?.loss)} · clip {figure(policy.metrics?.clipFraction)} · KL {figure(policy.metrics?.kl)} · lr{' '}
              {policy.metrics === null ? '–' : policy.metrics.learningRate.toExponential(1)} · reward {figure(policy.score?.meanScore, 2)} over {policy.score?.scoredTurns ?? 0} turns
            </div>
            {policy.active ? null : confirming === policy.version ? (
              <span class="confirm">
                Serve version {policy.version} to new requests?{' '}
                <button type="button" class="danger" onClick={() => activate(policy.version)}>Confirm activation</button>{' '}
                <button type="button" onClick={() => setConfirming(null)}>Cancel</button>
              </span>
            ) : (
              <button type="button" onClick={() => setConfirming(policy.version)}>Activate…</button>
            )}
          </li>
        ))}
      </ol>
      {next === null ? null : <button type="button" onClick={() => void load(next)}>Older versions</button>}
    </section>
  );
}
