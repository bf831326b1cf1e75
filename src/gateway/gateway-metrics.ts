/**
 * Prometheus metrics of the gateway, in a registry of its own (never prom-client's global one, so
 * several servers in one process, as in tests, do not collide).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { TrainingSummary } from '../spec/policy-registry.js';
import type { JudgingCounts } from '../spec/records.js';

export interface GatewayMetrics {
  readonly registry: Registry;
  requests: Counter<'route' | 'status'>;
  requestDuration: Histogram<'route' | 'stream'>;
  timeToFirstToken: Histogram<'stream'>;
  tokens: Counter<'kind'>;
  turns: Counter<'type' | 'status'>;
  /** Turns served with `X-Clawrl-Record: off`: counted, as numbers only, and nothing else kept. */
  unrecordedTurns: Counter<'type' | 'status'>;
  inFlight: Gauge<'route'>;
  /** Set at scrape time from the record store. */
  queueDepth: Gauge<'queue'>;
  /** Training state and the last step's metrics, set at scrape time from the record store. */
  training: Gauge<'metric'>;
  samples: Gauge<'status'>;
  recordTraining(summary: TrainingSummary, samples: JudgingCounts['samples']): void;
  /** Judging state, set at scrape time from the record store. */
  judging: Gauge<'metric'>;
  recordJudging(counts: JudgingCounts): void;
}

const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createGatewayMetrics(options: { collectProcessMetrics: boolean }): GatewayMetrics {
  const registry = new Registry();
  if (options.collectProcessMetrics) collectDefaultMetrics({ register: registry, prefix: 'clawrl_' });
  const training = new Gauge({
    name: 'clawrl_training',
    help: 'Training: steps, active and latest policy version, and the last step\'s loss, pg_loss, clip_fraction, kl, importance ratios, samples and time',
    labelNames: ['metric'],
    registers: [registry],
  });
  const samples = new Gauge({ name: 'clawrl_samples', help: 'Training samples by status', labelNames: ['status'], registers: [registry] });
  const judging = new Gauge({
    name: 'clawrl_judging',
    help: 'Judging: turns judged, pending, retrying and without next state; hints accepted and rejected; vote agreement; mean judge latency in seconds',
    labelNames: ['metric'],
    registers: [registry],
  });
  return {
    training,
    samples,
    judging,
    recordJudging(counts) {
      judging.set({ metric: 'judged' }, counts.judged);
      judging.set({ metric: 'pending' }, counts.pending);
      judging.set({ metric: 'retrying' }, counts.retrying);
      judging.set({ metric: 'without_next_state' }, counts.withoutNextState);
      judging.set({ metric: 'hints_accepted' }, counts.hintsAccepted);
      judging.set({ metric: 'hints_rejected' }, counts.hintsRejected);
      if (counts.voteAgreement !== null) judging.set({ metric: 'vote_agreement' }, counts.voteAgreement);
      if (counts.averageLatencyMs !== null) judging.set({ metric: 'latency_seconds_mean' }, counts.averageLatencyMs / 1000);
    },
    recordTraining(summary, counts) {
      for (const [status, count] of Object.entries(counts)) samples.set({ status }, count);
      training.set({ metric: 'steps' }, summary.steps);
      training.set({ metric: 'policy_version_active' }, summary.activeVersion ?? 0);
      training.set({ metric: 'policy_version_latest' }, summary.latestVersion ?? 0);
      const metrics = summary.lastStep?.metrics;
      if (metrics === undefined) return;
      const values: Record<string, number | null> = {
        loss: metrics.loss,
        pg_loss: metrics.policyGradientLoss,
        clip_fraction: metrics.clipFraction,
        kl: metrics.kl,
        anchor_kl: metrics.anchorKl ?? null,
        importance_ratio_mean: metrics.importanceRatio.mean,
        importance_ratio_min: metrics.importanceRatio.min,
        importance_ratio_max: metrics.importanceRatio.max,
        importance_ratio_truncated_fraction: metrics.importanceRatio.truncatedFraction,
        rollout_logprob_abs_diff: metrics.rolloutLogprobAbsoluteDifference,
        samples_used: metrics.samplesUsed,
        samples_dropped_stale: metrics.samplesDropped,
        samples_dropped_zero_advantage: metrics.samplesZeroAdvantage ?? null,
        gradient_norm: metrics.gradientNorm,
        step_seconds: metrics.stepMs / 1000,
      };
      for (const [metric, value] of Object.entries(values)) if (value !== null) training.set({ metric: `last_step_${metric}` }, value);
    },
    registry,
    requests: new Counter({
      name: 'clawrl_http_requests_total',
      help: 'HTTP requests by route and status code',
      labelNames: ['route', 'status'],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'clawrl_request_duration_seconds',
      help: 'Time from request arrival to the last byte of the response',
      labelNames: ['route', 'stream'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    timeToFirstToken: new Histogram({
      name: 'clawrl_time_to_first_token_seconds',
      help: 'Time from request arrival to the first generated content sent',
      labelNames: ['stream'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'clawrl_tokens_total',
      help: 'Prompt and completion tokens served',
      labelNames: ['kind'],
      registers: [registry],
    }),
    turns: new Counter({
      name: 'clawrl_turns_recorded_total',
      help: 'Turns written to the record store',
      labelNames: ['type', 'status'],
      registers: [registry],
    }),
    unrecordedTurns: new Counter({
      name: 'clawrl_turns_unrecorded_total',
      help: 'Turns served and not recorded (X-Clawrl-Record: off)',
      labelNames: ['type', 'status'],
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'clawrl_in_flight_requests',
      help: 'Requests being served now',
      labelNames: ['route'],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'clawrl_queue_depth',
      help: 'Work waiting in the record store: turns awaiting their next state, linked turns awaiting judgement',
      labelNames: ['queue'],
      registers: [registry],
    }),
  };
}
