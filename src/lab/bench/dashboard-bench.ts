/**
 * `clawrl bench dashboard`: what each dashboard page reads of the store, timed on a store of 100k
 * turns against the same reads on a store of 1k turns, in the same run (the ratio is the figure:
 * a page that reads an index range costs the same however much the store holds; one that scans
 * grows ~100×). Both the SQLite and the Postgres store, filled with identical traffic spread over
 * a week: sessions of ten main turns, a judgement and a sample for most turns, a training step and
 * a policy version every thousand turns, an activation per version.
 */
import type { RecordStore } from '../../spec/record-store.js';
import type { NewTurn, TrainingStepMetrics } from '../../spec/records.js';
import { percentile } from './load-generator.js';
import type { StoreBenchTarget } from './store-bench.js';

export interface DashboardBenchOptions {
  /** Turns in the big store (default 100k) and in the small peer (1k). */
  turns: number;
  peerTurns: number;
  /** Timed repetitions of each read. */
  repetitions: number;
  targets: (StoreBenchTarget | { name: string; unavailable: string })[];
  /** The fill's clock: the traffic ends here. */
  now: number;
  onProgress?: (message: string) => void;
}

export interface DashboardReadFigures {
  /** Median and 99th percentile of one read, in milliseconds, in the big store. */
  p50Ms: number;
  p99Ms: number;
  /** Median in the big store over median in the small one. */
  ratioToPeer: number;
}

export interface DashboardStoreFigures {
  store: string;
  turns: number;
  fillSeconds: number;
  reads: Record<string, DashboardReadFigures>;
}

export interface DashboardBenchResult {
  turns: number;
  peerTurns: number;
  repetitions: number;
  stores: DashboardStoreFigures[];
  unavailable: { store: string; reason: string }[];
}

const turnsPerSession = 10;
const week = 7 * 24 * 3_600_000;
const metrics: TrainingStepMetrics = {
  loss: 0.1,
  policyGradientLoss: 0.1,
  clipFraction: 0.05,
  kl: null,
  importanceRatio: { mean: 1, min: 0.9, max: 1.1, truncatedFraction: 0 },
  rolloutLogprobAbsoluteDifference: 0.01,
  samplesUsed: 16,
  samplesDropped: 0,
  lossTokens: 512,
  gradientNorm: 0.5,
  learningRate: 1e-4,
  stepMs: 900,
};

function benchTurn(index: number, options: { turns: number; now: number }): NewTurn {
  const session = Math.floor(index / turnsPerSession);
  const startedAt = options.now - week + Math.floor((index * week) / options.turns);
  const prompt = Array.from({ length: 64 }, (_, position) => 1_000 + ((session * 31 + position) % 5_000));
  const response = Array.from({ length: 48 }, (_, position) => 2_000 + ((index * 17 + position) % 5_000));
  return {
    id: `dash-turn-${index}`,
    sessionId: `dash-session-${session}`,
    type: index % 7 === 6 ? 'side' : 'main',
    status: 'completed',
    trainable: true,
    tenant: `tenant-${session % 5}`,
    user: `tenant-${session % 5}`,
    model: 'bench-model',
    policyVersion: Math.floor(index / 1_000),
    messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: `request ${index % turnsPerSession} of session ${session}` }],
    tools: [],
    sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
    promptTokenIds: prompt,
    responseTokenIds: response,
    logprobs: response.map((id) => -(id % 89) / 40),
    response: { role: 'assistant', content: `answer ${index}` },
    finishReason: 'stop',
    timings: { startedAt, firstTokenAt: startedAt + 20, endedAt: startedAt + 200 },
    error: null,
    replyKey: null,
  };
}

export async function fillDashboardBenchStore(store: RecordStore, turns: number, now: number): Promise<void> {
  const batch = 200;
  await store.recordPolicyVersion({ version: 0, parent: null, kind: 'base', files: {}, step: null, samples: 0, metrics: null, createdAt: now - week }, { activate: true });
  for (let start = 0; start < turns; start += batch) {
    const indexes = Array.from({ length: Math.min(batch, turns - start) }, (_, offset) => start + offset);
    const recorded = indexes.map((index) => benchTurn(index, { turns, now }));
    // Sessions start with their first turn (a batch holds whole sessions: 200 is a multiple of ten).
    await Promise.all(
      recorded.filter((turn, offset) => (start + offset) % turnsPerSession === 0).map((turn) => store.upsertSession({ id: turn.sessionId, tenant: turn.tenant, user: turn.tenant, at: turn.timings.startedAt })),
    );
    await Promise.all(recorded.map((turn) => store.recordTurn(turn)));
    const judged = recorded.filter((turn, offset) => turn.type === 'main' && (start + offset) % 5 !== 4);
    await Promise.all(
      judged.map((turn, offset) =>
        store.recordJudgement({
          turnId: turn.id,
          judge: 'policy',
          judgeModel: 'bench-model',
          promptVersion: 'v1',
          score: offset % 3 === 0 ? -1 : 1,
          votes: [{ kind: 'verdict', text: '\\boxed{1}', score: 1, hint: null, rejection: null }],
          hint: null,
          hintCandidates: [],
          hintSelection: null,
          latencyMs: 40,
          createdAt: turn.timings.endedAt + 500,
        }),
      ),
    );
    await Promise.all(
      judged.map((turn, offset) =>
        store.recordSample({
          id: `dash-sample-${turn.id}`,
          turnId: turn.id,
          method: 'rl',
          status: 'ready',
          dropReason: null,
          policyVersion: turn.policyVersion,
          judgementId: null,
          feedbackId: null,
          score: offset % 3 === 0 ? -1 : 1,
          hint: null,
          group: null, lossMask: turn.responseTokenIds.map(() => 1),
          distillationGaps: null,
          teacherLogprobs: null,
          support: null,
          createdAt: turn.timings.endedAt + 600,
        }),
      ),
    );
    // A policy version (activated) per thousand turns: the versions the next thousand serve.
    const done = start + indexes.length;
    if (done % 1_000 === 0) {
      const version = done / 1_000;
      const createdAt = (recorded.at(-1)?.timings.endedAt ?? now) + 1_000;
      await store.recordPolicyVersion({ version, parent: version - 1, kind: 'base', files: {}, step: version, samples: 16, metrics: { ...metrics, loss: 1 / version }, createdAt }, { activate: true });
    }
  }
}

async function timed(repetitions: number, read: () => Promise<unknown>): Promise<number[]> {
  await read();
  const times: number[] = [];
  for (let repetition = 0; repetition < repetitions; repetition += 1) {
    const startedAt = performance.now();
    await read();
    times.push(performance.now() - startedAt);
  }
  return times;
}

/** What each route of `/admin/dashboard` (and `/admin/status`) reads, as the gateway reads it. */
function dashboardReads(store: RecordStore, turns: number, now: number): Record<string, () => Promise<unknown>> {
  const middleSession = `dash-session-${Math.floor(turns / turnsPerSession / 2)}`;
  const middleTurn = `dash-turn-${Math.floor(turns / 2)}`;
  return {
    status: () => Promise.all([store.counts(), store.trainingSummary()]),
    overviewSeries: () => Promise.all([store.dashboard.activitySeries({ since: now - 3_600_000, until: now + 1, bucketMs: 60_000 }), store.listTrainingSteps({ limit: 500 })]),
    sessionsFirstPage: () => store.dashboard.listSessionSummaries({ limit: 50 }),
    sessionsDeepPage: () => store.dashboard.listSessionSummaries({ limit: 50, after: { createdAt: now - week / 2, id: middleSession } }),
    sessionsSearch: () => store.dashboard.listSessionSummaries({ limit: 50, search: middleSession }),
    sessionTurns: async () => {
      const session = await store.getSession(middleSession);
      const ids = session?.turnIds.slice(0, 50) ?? [];
      return Promise.all([store.getTurns(ids), store.dashboard.turnJudgings(ids)]);
    },
    turnTokens: () => Promise.all([store.getTurn(middleTurn), store.dashboard.turnJudgings([middleTurn]), store.listSamples({ turnId: middleTurn, limit: 1000 })]),
    policies: async () => {
      const versions = await store.listPolicyVersions();
      const newest = versions.at(-1)?.version ?? 0;
      return store.dashboard.policyTurnScores({ from: Math.max(0, newest - 49), to: newest });
    },
  };
}

function round(value: number, digits = 2): number {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}

export async function runDashboardBench(options: DashboardBenchOptions): Promise<DashboardBenchResult> {
  const stores: DashboardStoreFigures[] = [];
  const unavailable: { store: string; reason: string }[] = [];
  for (const target of options.targets) {
    if ('unavailable' in target) {
      unavailable.push({ store: target.name, reason: target.unavailable });
      continue;
    }
    const medians: Record<string, number>[] = [];
    const big: Record<string, number[]> = {};
    let fillSeconds = 0;
    for (const turns of [options.peerTurns, options.turns]) {
      options.onProgress?.(`${target.name}: filling ${turns} turns`);
      let store: RecordStore;
      try {
        store = await target.open();
      } catch (error) {
        unavailable.push({ store: target.name, reason: error instanceof Error ? error.message : String(error) });
        break;
      }
      try {
        const startedAt = performance.now();
        await fillDashboardBenchStore(store, turns, options.now);
        if (turns === options.turns) fillSeconds = (performance.now() - startedAt) / 1000;
        options.onProgress?.(`${target.name}: timing the dashboard's reads on ${turns} turns`);
        const median: Record<string, number> = {};
        for (const [name, read] of Object.entries(dashboardReads(store, turns, options.now))) {
          const times = await timed(options.repetitions, read);
          median[name] = percentile(times, 0.5);
          if (turns === options.turns) big[name] = times;
        }
        medians.push(median);
      } finally {
        await store.close();
        await target.cleanup();
      }
    }
    if (medians.length < 2) continue;
    const [small, large] = medians as [Record<string, number>, Record<string, number>];
    stores.push({
      store: target.name,
      turns: options.turns,
      fillSeconds: round(fillSeconds, 1),
      reads: Object.fromEntries(
        Object.entries(big).map(([name, times]) => [
          name,
          { p50Ms: round(large[name] ?? 0, 3), p99Ms: round(percentile(times, 0.99), 3), ratioToPeer: round((large[name] ?? 0) / Math.max(1e-3, small[name] ?? 0)) },
        ]),
      ),
    });
  }
  return { turns: options.turns, peerTurns: options.peerTurns, repetitions: options.repetitions, stores, unavailable };
}

export function formatDashboardBench(result: DashboardBenchResult): string {
  const lines = [`dashboard reads on ${result.turns} turns (ratio: median against the same read on ${result.peerTurns} turns), ${result.repetitions} repetitions`];
  for (const store of result.stores) {
    lines.push(`${store.store} (filled in ${store.fillSeconds} s)`, 'read                 p50 ms     p99 ms     ×peer');
    for (const [name, figures] of Object.entries(store.reads)) {
      lines.push(`${name.padEnd(20)} ${String(figures.p50Ms).padEnd(10)} ${String(figures.p99Ms).padEnd(10)} ${figures.ratioToPeer}`);
    }
  }
  for (const entry of result.unavailable) lines.push(`${entry.store}: unavailable: ${entry.reason}`);
  return lines.join('\n');
}
