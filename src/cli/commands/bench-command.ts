/** `clawrl bench <gateway|engine|store|training|serving|dashboard|replay>`: benchmarks that compare clawrl with a peer (or itself under other load) in the same run. */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { runTrainingBenchCommand } from './bench-training-command.js';
import { runReplayBenchCommand } from './bench-replay-command.js';
import { runEngineBench, type EngineBenchResult } from '../../lab/bench/engine-bench.js';
import { defaultServingBenchOptions, runServingBench, type ServingBenchResult } from '../../lab/bench/serving-bench.js';
import { defaultAdapterServingBenchOptions, runAdapterServingBench, type AdapterServingBenchResult } from '../../lab/bench/adapter-serving-bench.js';
import { createLocalInferenceEngine } from '../../engines/local/create-local-inference-engine.js';
import { localModelDirectoryOf } from '../wiring/create-inference-engine.js';
import {
  defaultGatewayBenchOptions,
  defaultRealisticPacing,
  runGatewayBench,
  type GatewayBenchJudgeLoad,
  type GatewayBenchResult,
  type ScenarioResult,
} from '../../lab/bench/gateway-bench.js';
import type { UpstreamPacing } from '../../lab/bench/bench-upstream.js';
import {
  defaultStoreBenchWorkload,
  quickStoreBenchWorkload,
  runStoreBench,
  type StoreBenchResult,
  type StoreBenchTarget,
} from '../../lab/bench/store-bench.js';
import { formatDashboardBench, runDashboardBench } from '../../lab/bench/dashboard-bench.js';
import { createPostgresRecordStore } from '../../stores/postgres/create-postgres-record-store.js';
import { dropPostgresSchema } from '../../stores/postgres/drop-postgres-schema.js';
import { createSqliteRecordStore } from '../../stores/sqlite/create-sqlite-record-store.js';
import { parsePostgresStoreUrl } from '../wiring/open-record-store.js';

const scenarioHeader = 'shape  stream  conc  direct p50/p99 ms  pass-through p50/p99 ms  rps   cpu ms  gateway p50/p99 ms  rps   cpu ms  ratio';

function scenarioLine(scenario: ScenarioResult): string {
  return [
    scenario.shape.padEnd(6),
    String(scenario.stream).padEnd(7),
    String(scenario.concurrency).padEnd(5),
    `${scenario.direct.p50Ms}/${scenario.direct.p99Ms}`.padEnd(18),
    `${scenario.passThrough.p50Ms}/${scenario.passThrough.p99Ms}`.padEnd(24),
    String(scenario.passThrough.requestsPerSecond).padEnd(6),
    String(scenario.passThrough.cpuMsPerRequest ?? '-').padEnd(7),
    `${scenario.gateway.p50Ms}/${scenario.gateway.p99Ms}`.padEnd(19),
    String(scenario.gateway.requestsPerSecond).padEnd(6),
    String(scenario.gateway.cpuMsPerRequest ?? '-').padEnd(7),
    String(scenario.throughputRatioVsPassthrough),
  ].join(' ');
}

export function formatGatewayBench(result: GatewayBenchResult): string {
  const lines = [
    `judge load: ${result.judgeLoad}`,
    'instant upstream (the stress case):',
    `  added latency vs direct (agent-shaped, streaming, concurrency 1): p50 ${result.addedLatencyMs.p50} ms, p99 ${result.addedLatencyMs.p99} ms (goal ≤ ${result.goal.addedLatencyP50Ms} ms p50)`,
    `  throughput vs bare pass-through proxy (agent-shaped, concurrency ≥ 32, worst case): ${result.throughputRatioVsPassthrough}× (goal ≥ ${result.goal.throughputRatio}×)`,
    `  gateway CPU per agent-shaped turn (concurrency ≥ 32, worst case): ${result.gatewayCpuMsPerAgentTurn ?? '-'} ms`,
  ];
  const realistic = result.realisticUpstream;
  if (realistic !== null) {
    const { upstream, tokensPerSecondPerStream: perStream } = realistic;
    lines.push(
      `realistic upstream (first token after ${upstream.timeToFirstTokenMs} ms, then ${upstream.timePerOutputTokenMs} ms a token, ${upstream.replyTokens} tokens a reply):`,
      `  added time to first token vs direct (agent-shaped, concurrency 1): gateway p50 ${realistic.addedTimeToFirstTokenMs.p50} ms, p99 ${realistic.addedTimeToFirstTokenMs.p99} ms; ` +
        `pass-through p50 ${realistic.passThroughAddedTimeToFirstTokenMs.p50} ms, p99 ${realistic.passThroughAddedTimeToFirstTokenMs.p99} ms`,
      `  tokens/s per stream (agent-shaped, concurrency ${perStream.concurrency}): direct ${perStream.direct ?? '-'}, pass-through ${perStream.passThrough ?? '-'}, gateway ${perStream.gateway ?? '-'}`,
      `  CPU per agent-shaped turn (concurrency ${perStream.concurrency}): gateway ${realistic.gatewayCpuMsPerAgentTurn ?? '-'} ms, pass-through ${realistic.passThroughCpuMsPerAgentTurn ?? '-'} ms`,
    );
  }
  lines.push('', 'instant upstream', scenarioHeader, ...result.scenarios.map(scenarioLine));
  if (realistic !== null) lines.push('', 'realistic upstream', scenarioHeader, ...realistic.scenarios.map(scenarioLine));
  return lines.join('\n');
}

export function formatServingBench(result: ServingBenchResult): string {
  const rates = (figures: ServingBenchResult['throughput']) => figures.map((figure) => `c=${figure.concurrency} ${figure.tokensPerSecond} tok/s`).join(', ');
  return [
    `${result.model} through clawrl serve:`,
    `  throughput: ${rates(result.throughput)}; highest over c=1: ${result.concurrencyScaling ?? '-'}× (goal ≥ ${result.goal.concurrencyScaling}×)`,
    `  agent session time to first token: first turn ${result.agentSession.firstTurnTtftMs.join(' / ')} ms, second ${result.agentSession.secondTurnTtftMs.join(' / ')} ms, ` +
      `second over first ${result.agentSession.secondOverFirst ?? '-'} (goal ≤ ${result.goal.secondTurnTtftRatio})`,
    `  a stream while a long prompt arrives: time per output token p50 ${result.whileLongPromptArrives.timePerOutputTokenMs.p50} ms, p99 ${result.whileLongPromptArrives.timePerOutputTokenMs.p99} ms; the long prompt's first token after ${result.whileLongPromptArrives.longPromptTtftMs} ms`,
    result.whileTraining === null
      ? ''
      : `  while the trainer steps (a step running at the start: ${result.whileTraining.throughput.map((figure) => figure.stepRunningAtStart).join(' / ')}; ${result.whileTraining.trainingStepsDuring} steps ended during): ${rates(result.whileTraining.throughput)}; ` +
        `a stream while a long prompt arrives: p50 ${result.whileTraining.whileLongPromptArrives.timePerOutputTokenMs.p50} ms, p99 ${result.whileTraining.whileLongPromptArrives.timePerOutputTokenMs.p99} ms`,
  ].join('\n');
}

export function formatAdapterServingBench(result: AdapterServingBenchResult): string {
  const figure = (value: { median: number; repeats: number[] }) => `${value.median} (${value.repeats.join(' / ')})`;
  const { tokensPerSecond: rates, ratios, firstTokenMs } = result;
  return [
    `${result.model}, ${result.adapters.count} adapters (${result.adapters.note}), embedded engine, median (each repeat):`,
    `  tokens/s: base c=1 ${figure(rates.baseConcurrency1)}, base c=8 ${figure(rates.baseConcurrency8)}, 8 adapters c=8 ${figure(rates.eightAdaptersConcurrency8)}, all ${result.adapters.count} c=8 ${figure(rates.allAdaptersConcurrency8)}`,
    `  8 adapters over base: ${figure(ratios.eightAdaptersOverBase)} (goal ≥ ${result.goal.eightAdaptersOverBase}); all over base ${figure(ratios.allAdaptersOverBase)}; base c=8 over c=1 ${figure(ratios.concurrency8OverConcurrency1)} (goal ≥ ${result.goal.concurrency8OverConcurrency1})`,
    `  first token ms: cold adapter idle ${figure(firstTokenMs.coldIdle)} (goal ≤ ${result.goal.coldFirstTokenMs}), resident idle ${figure(firstTokenMs.warmIdle)}, cold under load ${figure(firstTokenMs.coldUnderLoad)}`,
  ].join('\n');
}

export function formatEngineBench(result: EngineBenchResult): string {
  const lines = [
    `clawrl: two wasm instances at once (one per core); in brackets one instance. ${result.pytorchNote}.`,
    'config               params      train tok/s        score tok/s        sample b1          sample b8          RSS MiB  torch train/b1/b8      ratio train/b1/b8',
  ];
  for (const entry of result.configs) {
    const single = entry.singleInstance;
    lines.push(
      [
        entry.name.padEnd(20),
        String(entry.params).padEnd(11),
        `${entry.trainTokPerS} (${single.trainTokPerS})`.padEnd(18),
        `${entry.scoreTokPerS} (${single.scoreTokPerS})`.padEnd(18),
        `${entry.sampleTokPerS.b1} (${single.sampleTokPerS.b1})`.padEnd(18),
        `${entry.sampleTokPerS.b8} (${single.sampleTokPerS.b8})`.padEnd(18),
        String(entry.peakRssMiB).padEnd(8),
        (entry.pytorch === null ? '-' : `${entry.pytorch.trainTokPerS}/${entry.pytorch.sampleTokPerS.b1}/${entry.pytorch.sampleTokPerS.b8}`).padEnd(22),
        entry.ratio === null ? '-' : `${entry.ratio.train}/${entry.ratio.sampleB1}/${entry.ratio.sampleB8}`,
      ].join(' '),
    );
  }
  return lines.join('\n');
}

export function formatStoreBench(result: StoreBenchResult): string {
  const { workload } = result;
  const lines = [
    `${workload.sessions} sessions × ${workload.turnsPerSession} turns, ${workload.concurrency} at a time, ` +
      `~${workload.systemPromptTokens}-token shared system prompt; trainer claims in batches of ${workload.claimBatch}`,
    'store     turns/s    turn write p50/p99 ms   samples claimed/s',
  ];
  for (const [name, figures] of [['sqlite', result.sqlite], ['postgres', result.postgres]] as const) {
    if (figures === null) {
      lines.push(`${name.padEnd(9)} unavailable: ${result.postgresUnavailable ?? 'unknown reason'}`);
      continue;
    }
    lines.push(
      [
        name.padEnd(9),
        String(figures.turnsPerSecond).padEnd(10),
        `${figures.turnWriteMs.p50}/${figures.turnWriteMs.p99}`.padEnd(23),
        String(figures.samplesClaimedPerSecond),
      ].join(' '),
    );
  }
  if (result.ratio !== null) {
    lines.push(`postgres / sqlite: turns ${result.ratio.turnsPerSecond}×, samples claimed ${result.ratio.samplesClaimedPerSecond}×`);
  }
  return lines.join('\n');
}

// The local server of the development machines and CI; CLAWRL_STORE_URL points elsewhere.
const defaultBenchPostgresUrl = 'postgres://postgres@127.0.0.1:5432/postgres';

/** SQLite in a temporary directory and Postgres in a throw-away schema, both removed afterwards. */
function storeBenchTargets(storeUrl: string): { sqlite: StoreBenchTarget; postgres: StoreBenchTarget } {
  const directory = mkdtempSync(path.join(tmpdir(), 'clawrl-store-bench-'));
  const { connectionString } = parsePostgresStoreUrl(storeUrl);
  const schema = `clawrl_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  return {
    sqlite: {
      name: 'sqlite',
      open: async () => createSqliteRecordStore({ path: path.join(directory, 'clawrl.db') }),
      cleanup: async () => rmSync(directory, { recursive: true, force: true }),
    },
    postgres: {
      name: 'postgres',
      open: () => createPostgresRecordStore({ connectionString, schema }),
      cleanup: () => dropPostgresSchema({ connectionString, schema }),
    },
  };
}

/** Like `storeBenchTargets`, but every `open` is a fresh store (the dashboard bench fills two). */
function dashboardBenchTargets(storeUrl: string): StoreBenchTarget[] {
  const { connectionString } = parsePostgresStoreUrl(storeUrl);
  let directory = '';
  let schema = '';
  return [
    {
      name: 'sqlite',
      open: async () => {
        directory = mkdtempSync(path.join(tmpdir(), 'clawrl-dashboard-bench-'));
        return createSqliteRecordStore({ path: path.join(directory, 'clawrl.db') });
      },
      cleanup: async () => rmSync(directory, { recursive: true, force: true }),
    },
    {
      name: 'postgres',
      open: () => {
        schema = `clawrl_dashboard_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
        return createPostgresRecordStore({ connectionString, schema });
      },
      cleanup: () => dropPostgresSchema({ connectionString, schema }),
    },
  ];
}

const judgeLoads: readonly GatewayBenchJudgeLoad[] = ['concurrent', 'drained', 'none'];

function judgeLoadOf(text: string | undefined): GatewayBenchJudgeLoad {
  const found = judgeLoads.find((load) => load === (text ?? 'concurrent'));
  if (found === undefined) throw new ClawrlError('configuration_error', `Unknown --judge-load '${text}': use ${judgeLoads.join(', ')}.`);
  return found;
}

/** Another build's `dist/cli/main.js`, to compare two builds under one harness. */
function cliScriptOf(file: string): string {
  const resolved = path.resolve(file);
  if (!existsSync(resolved)) throw new ClawrlError('configuration_error', `--cli-script: no such file ${resolved} (a build's dist/cli/main.js).`, { param: 'cliScript' });
  return resolved;
}

/** A non-negative number of milliseconds (or a positive count) given to a `--upstream-*` flag. */
function numberOf(text: string | undefined, fallback: number, flag: string, param: string, integer = false): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || (integer && (!Number.isInteger(value) || value < 1))) {
    throw new ClawrlError('configuration_error', `${flag} must be a ${integer ? 'positive integer' : 'non-negative number of milliseconds'}, got '${text}'.`, { param });
  }
  return value;
}

export function upstreamPacingOf(options: { upstreamTtftMs?: string; upstreamTpotMs?: string; upstreamReplyTokens?: string }): UpstreamPacing {
  return {
    timeToFirstTokenMs: numberOf(options.upstreamTtftMs, defaultRealisticPacing.timeToFirstTokenMs, '--upstream-ttft-ms', 'upstreamTtftMs'),
    timePerOutputTokenMs: numberOf(options.upstreamTpotMs, defaultRealisticPacing.timePerOutputTokenMs, '--upstream-tpot-ms', 'upstreamTpotMs'),
    replyTokens: numberOf(options.upstreamReplyTokens, defaultRealisticPacing.replyTokens, '--upstream-reply-tokens', 'upstreamReplyTokens', true),
  };
}

function adaptersOf(text: string): number {
  const adapters = Number(text);
  if (!Number.isInteger(adapters) || adapters < 9) throw new ClawrlError('configuration_error', `--adapters must be an integer of at least 9, got '${text}'.`, { param: 'adapters' });
  return adapters;
}

function roundsOf(text: string | undefined): number {
  const rounds = Number(text ?? 2);
  if (!Number.isInteger(rounds) || rounds < 1) throw new ClawrlError('configuration_error', `--rounds must be a positive integer, got '${text}'.`, { param: 'rounds' });
  return rounds;
}

export async function runBenchCommand(
  target: string,
  options: {
    json: boolean;
    quick: boolean;
    model?: string;
    trainParams?: string;
    judgeLoad?: string;
    rounds?: string;
    adapters?: string;
    cliScript?: string;
    upstreamTtftMs?: string;
    upstreamTpotMs?: string;
    upstreamReplyTokens?: string;
    sessions?: string;
  },
): Promise<void> {
  if (target === 'replay') {
    await runReplayBenchCommand(options);
    return;
  }
  if (target === 'training') {
    await runTrainingBenchCommand(options);
    return;
  }
  if (target === 'store') {
    const targets = storeBenchTargets(process.env.CLAWRL_STORE_URL ?? defaultBenchPostgresUrl);
    const result = await runStoreBench({
      workload: options.quick ? quickStoreBenchWorkload : defaultStoreBenchWorkload,
      ...targets,
      onProgress: (message) => process.stderr.write(`bench: ${message}\n`),
    });
    process.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatStoreBench(result)}\n`);
    return;
  }
  if (target === 'dashboard') {
    const result = await runDashboardBench({
      turns: options.quick ? 5_000 : 100_000,
      peerTurns: options.quick ? 500 : 1_000,
      repetitions: options.quick ? 5 : 30,
      targets: dashboardBenchTargets(process.env.CLAWRL_STORE_URL ?? defaultBenchPostgresUrl),
      now: Date.now(),
      onProgress: (message) => process.stderr.write(`bench: ${message}\n`),
    });
    process.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatDashboardBench(result)}\n`);
    return;
  }
  if (target === 'engine') {
    const result = await runEngineBench({
      ...(options.quick ? { configNames: ['test-100k'] } : {}),
      onProgress: (message) => process.stderr.write(`bench: ${message}\n`),
    });
    process.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatEngineBench(result)}\n`);
    return;
  }
  if (target === 'serving' && options.adapters !== undefined) {
    const adapters = adaptersOf(options.adapters);
    const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
    const modelDirectory = localModelDirectoryOf('builtin:tiny');
    const adapterResult = await runAdapterServingBench({
      ...defaultAdapterServingBenchOptions,
      ...(options.quick ? { repeats: 1, requestsPerFigure: 8 } : {}),
      adapters,
      modelDirectory,
      // The engine `clawrl serve` runs on the built-in model, with its defaults.
      createEngine: () => createLocalInferenceEngine({ modelDirectory, modelId: 'builtin:tiny', fitPrompts: true }),
      onProgress: progress,
    });
    const server = await runServingBench({
      ...defaultServingBenchOptions,
      ...(options.quick ? { concurrencies: [1, 2], streamTokens: 8, agentSessions: 1 } : {}),
      cliScript: options.cliScript === undefined ? path.join(import.meta.dirname, '..', 'main.js') : cliScriptOf(options.cliScript),
      onProgress: progress,
    });
    const result = { ...server, adapters: adapterResult };
    process.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : `${formatServingBench(server)}\n${formatAdapterServingBench(adapterResult)}`}\n`);
    return;
  }
  if (target === 'serving') {
    const result = await runServingBench({
      ...defaultServingBenchOptions,
      ...(options.quick ? { concurrencies: [1, 2], streamTokens: 8, agentSessions: 1 } : {}),
      cliScript: options.cliScript === undefined ? path.join(import.meta.dirname, '..', 'main.js') : cliScriptOf(options.cliScript),
      onProgress: (message) => process.stderr.write(`bench: ${message}\n`),
    });
    process.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatServingBench(result)}\n`);
    return;
  }
  if (target !== 'gateway') {
    throw new ClawrlError('configuration_error', `Unknown benchmark '${target}': use gateway, engine, store, training, serving, dashboard or replay.`);
  }
  const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
  const result = await runGatewayBench({
    ...defaultGatewayBenchOptions,
    judgeLoad: judgeLoadOf(options.judgeLoad),
    rounds: roundsOf(options.rounds),
    realisticPacing: upstreamPacingOf(options),
    ...(options.cliScript === undefined ? {} : { cliScript: cliScriptOf(options.cliScript) }),
    ...(options.quick
      ? {
          concurrencies: [1, 4],
          requestsAt: () => 20,
          warmUpRequests: 0,
          realisticScenarios: [
            { shape: 'agent' as const, stream: true, concurrency: 1, requests: 4 },
            { shape: 'agent' as const, stream: true, concurrency: 4, requests: 8 },
          ],
        }
      : {}),
    onProgress: progress,
  });
  process.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatGatewayBench(result)}\n`);
}
