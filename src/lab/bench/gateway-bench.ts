/**
 * `clawrl bench gateway`: what the gateway adds over calling the engine directly, and its
 * throughput and CPU time against a bare pass-through proxy, measured in one run on the same
 * upstream: first answering instantly (the stress case: nothing but the proxies' own work), then
 * paced like a served model (what a user feels: added time to first token, tokens/s per stream).
 * Upstream, proxy and gateway each run in their own process; targets alternate within every
 * scenario so machine noise hits them alike.
 *
 * The judge load is a choice (`judgeLoad`), because on a small machine it decides the figures:
 * `concurrent` is `clawrl serve` as users run it (the judge works through every earlier scenario's
 * backlog while later ones are measured); `drained` is the same server, but each scenario waits
 * until the judge has no backlog, so it competes only with judging the scenario's own turns;
 * `none` is `clawrl gateway` alone (the judge runs elsewhere, as in distributed mode), which is
 * what the gateway itself costs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestShape } from './agent-request-shapes.js';
import { setUpstreamPacing, type UpstreamPacing } from './bench-upstream.js';
import { percentile, runLoad, type LoadResult } from './load-generator.js';
import { processCpuMs } from './process-cpu-time.js';
import { spawnReadyProcess } from './spawn-ready-process.js';
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface TargetFigures {
  /** Requests measured, over all rounds. */
  requests: number;
  p50Ms: number;
  p99Ms: number;
  requestsPerSecond: number;
  errors: number;
  /** The target process's CPU time over its rounds, per request (null off Linux). */
  cpuMsPerRequest: number | null;
  /** Streaming only: from sending a request to its first content. */
  timeToFirstTokenMs: { p50: number; p99: number } | null;
  /** Streaming only: the median stream's tokens per second after its first. */
  tokensPerSecondPerStream: number | null;
}

export type GatewayBenchJudgeLoad = 'concurrent' | 'drained' | 'none';

export interface ScenarioResult {
  shape: RequestShape;
  stream: boolean;
  concurrency: number;
  direct: TargetFigures;
  passThrough: TargetFigures;
  gateway: TargetFigures;
  addedLatencyMs: { p50: number; p99: number };
  throughputRatioVsPassthrough: number;
  /** Linked turns waiting for the judge when the scenario started (null without a judge). */
  judgeBacklogAtStart: number | null;
}

/** What a user of a served model feels: the same targets, the upstream paced like an engine. */
export interface RealisticUpstreamResult {
  upstream: UpstreamPacing;
  /** Gateway minus direct time to first token, agent-shaped streaming at concurrency 1. */
  addedTimeToFirstTokenMs: { p50: number; p99: number };
  /** The same for the bare pass-through proxy, the floor of any proxy. */
  passThroughAddedTimeToFirstTokenMs: { p50: number; p99: number };
  /** Median stream's tokens/s, agent-shaped streaming at the highest concurrency measured. */
  tokensPerSecondPerStream: { direct: number | null; passThrough: number | null; gateway: number | null; concurrency: number };
  /** Gateway process CPU per agent-shaped streaming turn, at the highest concurrency measured (null off Linux). */
  gatewayCpuMsPerAgentTurn: number | null;
  passThroughCpuMsPerAgentTurn: number | null;
  scenarios: ScenarioResult[];
}

export interface GatewayBenchResult {
  judgeLoad: GatewayBenchJudgeLoad;
  /** Instant upstream: gateway minus direct, agent-shaped streaming requests at concurrency 1 (the OpenClaw case). */
  addedLatencyMs: { p50: number; p99: number };
  /** Instant upstream: gateway over pass-through requests/s, the lowest over the agent-shaped scenarios at concurrency ≥ 32. */
  throughputRatioVsPassthrough: number;
  /** Instant upstream: gateway process CPU per agent-shaped turn, the highest over the agent-shaped scenarios at concurrency ≥ 32. */
  gatewayCpuMsPerAgentTurn: number | null;
  scenarios: ScenarioResult[];
  /** Null when no realistic scenario was asked for. */
  realisticUpstream: RealisticUpstreamResult | null;
  goal: { addedLatencyP50Ms: number; throughputRatio: number };
}

export interface RealisticScenario {
  shape: RequestShape;
  stream: boolean;
  concurrency: number;
  /** Requests per target over two rounds (as `requestsAt`: each round serves half). */
  requests: number;
}

export interface GatewayBenchOptions {
  concurrencies: number[];
  shapes: RequestShape[];
  streams: boolean[];
  /** Requests per target per scenario, scaled by concurrency. */
  requestsAt: (concurrency: number) => number;
  /** Agent-shaped requests each target serves before the first scenario, not measured; default 0. */
  warmUpRequests?: number;
  /** Pacing of the realistic upstream; default `defaultRealisticPacing`. */
  realisticPacing?: UpstreamPacing;
  /** Scenarios measured after the instant ones against the paced upstream; none: no realistic figures. */
  realisticScenarios?: RealisticScenario[];
  /** The `clawrl` entry script to benchmark; default this build's, another to compare builds under one harness. */
  cliScript?: string;
  /** Default `concurrent` (see the file comment). */
  judgeLoad?: GatewayBenchJudgeLoad;
  /**
   * Alternating rounds per scenario, each of half `requestsAt` per target; default 2. More rounds
   * measure longer and average more of this machine's noise, for comparing two builds.
   */
  rounds?: number;
  /** Longest wait for the judge to drain before a scenario in `drained` mode; default 10 minutes. */
  drainTimeoutMs?: number;
  onProgress?: (message: string) => void;
}

/**
 * A ~4B model served on one data-centre GPU (vLLM, Qwen3-4B class, bf16): with prefix caching an
 * agent's growing conversation reuses most of its 11k-token prompt, so the first token comes after
 * tens of milliseconds (50); decoding with a few dozen streams batched takes 20–30 ms a token (25,
 * 40 tokens/s per stream). 32 tokens a reply keeps a run short; a reply's length changes only how
 * long a stream lasts, not what the gateway adds to each token.
 */
export const defaultRealisticPacing: UpstreamPacing = { timeToFirstTokenMs: 50, timePerOutputTokenMs: 25, replyTokens: 32 };

export const defaultGatewayBenchOptions: GatewayBenchOptions = {
  concurrencies: [1, 32, 128],
  shapes: ['agent', 'small'],
  streams: [true, false],
  requestsAt: (concurrency) => (concurrency === 1 ? 300 : concurrency * 12),
  // Without it the first scenario (the headline's) measured the gateway's JIT warm-up: its first
  // few hundred requests cost about twice its steady state, while the direct upstream has little
  // to warm up.
  warmUpRequests: 400,
  realisticPacing: defaultRealisticPacing,
  // Concurrency 1 is one agent waiting for its turn; 32 is a small team's agents sharing one engine.
  realisticScenarios: [
    { shape: 'agent', stream: true, concurrency: 1, requests: 40 },
    { shape: 'agent', stream: true, concurrency: 32, requests: 192 },
  ],
};

function figures(result: LoadResult, cpuMs: number | null, stream: boolean): TargetFigures {
  const perStream = percentile(result.tokensPerSecondPerStream, 0.5);
  return {
    requests: result.requests,
    p50Ms: round(percentile(result.latenciesMs, 0.5)),
    p99Ms: round(percentile(result.latenciesMs, 0.99)),
    requestsPerSecond: round((result.requests / result.durationMs) * 1000),
    errors: result.errors,
    cpuMsPerRequest: cpuMs === null || result.requests === 0 ? null : round(cpuMs / result.requests),
    timeToFirstTokenMs: stream
      ? { p50: round(percentile(result.timesToFirstTokenMs, 0.5)), p99: round(percentile(result.timesToFirstTokenMs, 0.99)) }
      : null,
    tokensPerSecondPerStream: stream && Number.isFinite(perStream) ? round(perStream) : null,
  };
}

const round = (value: number) => Math.round(value * 1000) / 1000;

/** Linked turns the judge has not finished (pending or waiting to retry), from `/admin/status`. */
async function judgeBacklog(gatewayUrl: string): Promise<number> {
  const response = await fetch(new URL('/admin/status', gatewayUrl));
  if (!response.ok) throw new ClawrlError('internal_error', `the bench gateway answered /admin/status with HTTP ${response.status}`);
  const status = (await response.json()) as { judging?: { pending?: number; retrying?: number } };
  return (status.judging?.pending ?? 0) + (status.judging?.retrying ?? 0);
}

async function waitForJudgeDrain(gatewayUrl: string, timeoutMs: number, onProgress?: (message: string) => void): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let backlog = await judgeBacklog(gatewayUrl);
  if (backlog > 0) onProgress?.(`waiting for the judge to drain ${backlog} turns`);
  while (backlog > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    backlog = await judgeBacklog(gatewayUrl);
  }
  if (backlog > 0) onProgress?.(`the judge still has ${backlog} turns after ${timeoutMs} ms; measuring anyway`);
  return backlog;
}

type TargetName = 'direct' | 'passThrough' | 'gateway';
const targetNames: readonly TargetName[] = ['direct', 'passThrough', 'gateway'];

interface Target {
  url: string;
  pid: number | undefined;
}

/** One scenario: alternating rounds per target, so a burst of noise does not land on one target only. */
async function measureScenario(
  targets: Record<TargetName, Target>,
  scenario: { shape: RequestShape; stream: boolean; concurrency: number; requests: number },
  rounds: number,
  runName: () => string,
): Promise<Record<TargetName, TargetFigures>> {
  const results: Record<TargetName, LoadResult[]> = { direct: [], passThrough: [], gateway: [] };
  const cpuMs: Record<TargetName, number | null> = { direct: 0, passThrough: 0, gateway: 0 };
  for (let round = 0; round < rounds; round += 1) {
    for (const name of targetNames) {
      const before = processCpuMs(targets[name].pid);
      results[name].push(
        await runLoad({ baseUrl: targets[name].url, ...scenario, requests: Math.ceil(scenario.requests / 2), runName: runName() }),
      );
      const after = processCpuMs(targets[name].pid);
      const spent = cpuMs[name];
      cpuMs[name] = before === null || after === null || spent === null ? null : spent + after - before;
    }
  }
  const merged = (name: TargetName): LoadResult => ({
    requests: results[name].reduce((sum, result) => sum + result.requests, 0),
    errors: results[name].reduce((sum, result) => sum + result.errors, 0),
    latenciesMs: results[name].flatMap((result) => result.latenciesMs),
    timesToFirstTokenMs: results[name].flatMap((result) => result.timesToFirstTokenMs),
    tokensPerSecondPerStream: results[name].flatMap((result) => result.tokensPerSecondPerStream),
    durationMs: results[name].reduce((sum, result) => sum + result.durationMs, 0),
  });
  return {
    direct: figures(merged('direct'), cpuMs.direct, scenario.stream),
    passThrough: figures(merged('passThrough'), cpuMs.passThrough, scenario.stream),
    gateway: figures(merged('gateway'), cpuMs.gateway, scenario.stream),
  };
}

function scenarioResult(
  scenario: { shape: RequestShape; stream: boolean; concurrency: number },
  measured: Record<TargetName, TargetFigures>,
  judgeBacklogAtStart: number | null,
): ScenarioResult {
  const { direct, passThrough, gateway } = measured;
  return {
    shape: scenario.shape,
    stream: scenario.stream,
    concurrency: scenario.concurrency,
    direct,
    passThrough,
    gateway,
    addedLatencyMs: { p50: round(gateway.p50Ms - direct.p50Ms), p99: round(gateway.p99Ms - direct.p99Ms) },
    throughputRatioVsPassthrough: round(gateway.requestsPerSecond / passThrough.requestsPerSecond),
    judgeBacklogAtStart,
  };
}

const addedTimeToFirstToken = (target: TargetFigures, direct: TargetFigures) => ({
  p50: round((target.timeToFirstTokenMs?.p50 ?? Number.NaN) - (direct.timeToFirstTokenMs?.p50 ?? Number.NaN)),
  p99: round((target.timeToFirstTokenMs?.p99 ?? Number.NaN) - (direct.timeToFirstTokenMs?.p99 ?? Number.NaN)),
});

/** The realistic figures' headlines, from the scenarios measured against the paced upstream. */
export function summarizeRealistic(upstream: UpstreamPacing, scenarios: ScenarioResult[]): RealisticUpstreamResult {
  const agentStreams = scenarios.filter((scenario) => scenario.shape === 'agent' && scenario.stream);
  const single = agentStreams.find((scenario) => scenario.concurrency === 1);
  const busiest = agentStreams.reduce<ScenarioResult | undefined>((best, scenario) => (best === undefined || scenario.concurrency > best.concurrency ? scenario : best), undefined);
  const notMeasured = { p50: Number.NaN, p99: Number.NaN };
  return {
    upstream,
    addedTimeToFirstTokenMs: single === undefined ? notMeasured : addedTimeToFirstToken(single.gateway, single.direct),
    passThroughAddedTimeToFirstTokenMs: single === undefined ? notMeasured : addedTimeToFirstToken(single.passThrough, single.direct),
    tokensPerSecondPerStream: {
      direct: busiest?.direct.tokensPerSecondPerStream ?? null,
      passThrough: busiest?.passThrough.tokensPerSecondPerStream ?? null,
      gateway: busiest?.gateway.tokensPerSecondPerStream ?? null,
      concurrency: busiest?.concurrency ?? 0,
    },
    gatewayCpuMsPerAgentTurn: busiest?.gateway.cpuMsPerRequest ?? null,
    passThroughCpuMsPerAgentTurn: busiest?.passThrough.cpuMsPerRequest ?? null,
    scenarios,
  };
}

export async function runGatewayBench(options: GatewayBenchOptions = defaultGatewayBenchOptions): Promise<GatewayBenchResult> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const peerScript = path.join(here, 'run-bench-peer.js');
  const cliScript = options.cliScript ?? path.join(here, '..', '..', 'cli', 'main.js');
  const data = mkdtempSync(path.join(tmpdir(), 'clawrl-bench-'));
  const upstream = await spawnReadyProcess(peerScript, ['upstream']);
  const processes = [upstream];
  try {
    const proxy = await spawnReadyProcess(peerScript, ['proxy', upstream.url]);
    processes.push(proxy);
    const judgeLoad = options.judgeLoad ?? 'concurrent';
    const gateway = await spawnReadyProcess(cliScript, [
      ...(judgeLoad === 'none' ? ['gateway', '--store', 'sqlite', '--bus', 'memory'] : ['serve']),
      '--engine', 'vllm', '--upstream', upstream.url, '--model', 'bench-model', '--port', '0',
      '--data', data, '--concurrency-per-key', '4096', '--session-idle-timeout', '3600',
    ]);
    processes.push(gateway);
    const targets: Record<TargetName, Target> = {
      direct: { url: upstream.url, pid: upstream.child.pid },
      passThrough: { url: proxy.url, pid: proxy.child.pid },
      gateway: { url: gateway.url, pid: gateway.child.pid },
    };
    const rounds = options.rounds ?? 2;
    let run = 0;
    const runName = () => `r${(run += 1)}`;
    const backlogNow = async (): Promise<number | null> =>
      judgeLoad === 'none'
        ? null
        : judgeLoad === 'drained'
          ? await waitForJudgeDrain(gateway.url, options.drainTimeoutMs ?? 600_000, options.onProgress)
          : await judgeBacklog(gateway.url);
    if ((options.warmUpRequests ?? 0) > 0) {
      options.onProgress?.(`warming up: ${options.warmUpRequests} agent-shaped requests per target`);
      for (const name of targetNames) {
        await runLoad({ baseUrl: targets[name].url, shape: 'agent', stream: true, concurrency: 4, requests: options.warmUpRequests ?? 0, runName: `warm-up-${name}` });
      }
    }
    const scenarios: ScenarioResult[] = [];
    for (const shape of options.shapes) {
      for (const stream of options.streams) {
        for (const concurrency of options.concurrencies) {
          const requests = options.requestsAt(concurrency);
          const judgeBacklogAtStart = await backlogNow();
          options.onProgress?.(`instant upstream, ${shape} ${stream ? 'stream' : 'non-stream'} concurrency ${concurrency}: ${requests} requests per target`);
          const measured = await measureScenario(targets, { shape, stream, concurrency, requests }, rounds, runName);
          scenarios.push(scenarioResult({ shape, stream, concurrency }, measured, judgeBacklogAtStart));
        }
      }
    }
    let realisticUpstream: RealisticUpstreamResult | null = null;
    const realisticScenarios = options.realisticScenarios ?? [];
    if (realisticScenarios.length > 0) {
      const pacing = options.realisticPacing ?? defaultRealisticPacing;
      await setUpstreamPacing(upstream.url, pacing);
      const measuredRealistic: ScenarioResult[] = [];
      for (const scenario of realisticScenarios) {
        const judgeBacklogAtStart = await backlogNow();
        options.onProgress?.(
          `realistic upstream (first token ${pacing.timeToFirstTokenMs} ms, ${pacing.timePerOutputTokenMs} ms a token), ${scenario.shape} ` +
            `${scenario.stream ? 'stream' : 'non-stream'} concurrency ${scenario.concurrency}: ${scenario.requests} requests per target`,
        );
        measuredRealistic.push(scenarioResult(scenario, await measureScenario(targets, scenario, rounds, runName), judgeBacklogAtStart));
      }
      realisticUpstream = summarizeRealistic(pacing, measuredRealistic);
    }
    const headline =
      scenarios.find((scenario) => scenario.shape === 'agent' && scenario.stream && scenario.concurrency === 1) ?? scenarios[0];
    const loaded = scenarios.filter((scenario) => scenario.concurrency >= 32 && scenario.shape === 'agent');
    const loadedCpu = loaded.map((scenario) => scenario.gateway.cpuMsPerRequest).filter((value): value is number => value !== null);
    return {
      judgeLoad,
      addedLatencyMs: headline?.addedLatencyMs ?? { p50: Number.NaN, p99: Number.NaN },
      throughputRatioVsPassthrough: loaded.length > 0 ? Math.min(...loaded.map((scenario) => scenario.throughputRatioVsPassthrough)) : Number.NaN,
      gatewayCpuMsPerAgentTurn: loadedCpu.length > 0 ? Math.max(...loadedCpu) : null,
      scenarios,
      realisticUpstream,
      goal: { addedLatencyP50Ms: 1, throughputRatio: 0.8 },
    };
  } finally {
    await Promise.all(processes.map((started) => started.stop()));
    rmSync(data, { recursive: true, force: true });
  }
}
