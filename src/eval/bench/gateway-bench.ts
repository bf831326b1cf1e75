/**
 * `clawrl bench gateway`: what the gateway adds over calling the engine directly, and its
 * throughput against a bare pass-through proxy, measured in one run on the same fast upstream.
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
import { percentile, runLoad, type LoadResult } from './load-generator.js';
import { spawnReadyProcess } from './spawn-ready-process.js';
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface TargetFigures {
  /** Requests measured, over all rounds. */
  requests: number;
  p50Ms: number;
  p99Ms: number;
  requestsPerSecond: number;
  errors: number;
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

export interface GatewayBenchResult {
  judgeLoad: GatewayBenchJudgeLoad;
  /** Gateway minus direct, agent-shaped streaming requests at concurrency 1 (the OpenClaw case). */
  addedLatencyMs: { p50: number; p99: number };
  /** Gateway over pass-through requests/s, the lowest over the agent-shaped scenarios at concurrency ≥ 32. */
  throughputRatioVsPassthrough: number;
  scenarios: ScenarioResult[];
  goal: { addedLatencyP50Ms: number; throughputRatio: number };
}

export interface GatewayBenchOptions {
  concurrencies: number[];
  shapes: RequestShape[];
  streams: boolean[];
  /** Requests per target per scenario, scaled by concurrency. */
  requestsAt: (concurrency: number) => number;
  /** Agent-shaped requests each target serves before the first scenario, not measured; default 0. */
  warmUpRequests?: number;
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

export const defaultGatewayBenchOptions: GatewayBenchOptions = {
  concurrencies: [1, 32, 128],
  shapes: ['agent', 'small'],
  streams: [true, false],
  requestsAt: (concurrency) => (concurrency === 1 ? 300 : concurrency * 12),
  // Without it the first scenario (the headline's) measured the gateway's JIT warm-up: its first
  // few hundred requests cost about twice its steady state, while the direct upstream has little
  // to warm up.
  warmUpRequests: 400,
};

function figures(result: LoadResult): TargetFigures {
  return {
    requests: result.requests,
    p50Ms: round(percentile(result.latenciesMs, 0.5)),
    p99Ms: round(percentile(result.latenciesMs, 0.99)),
    requestsPerSecond: round((result.requests / result.durationMs) * 1000),
    errors: result.errors,
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
    const targets = { direct: upstream.url, passThrough: proxy.url, gateway: gateway.url };
    const scenarios: ScenarioResult[] = [];
    let run = 0;
    if ((options.warmUpRequests ?? 0) > 0) {
      options.onProgress?.(`warming up: ${options.warmUpRequests} agent-shaped requests per target`);
      for (const name of ['direct', 'passThrough', 'gateway'] as const) {
        await runLoad({ baseUrl: targets[name], shape: 'agent', stream: true, concurrency: 4, requests: options.warmUpRequests ?? 0, runName: `warm-up-${name}` });
      }
    }
    for (const shape of options.shapes) {
      for (const stream of options.streams) {
        for (const concurrency of options.concurrencies) {
          const requests = options.requestsAt(concurrency);
          const judgeBacklogAtStart =
            judgeLoad === 'none'
              ? null
              : judgeLoad === 'drained'
                ? await waitForJudgeDrain(gateway.url, options.drainTimeoutMs ?? 600_000, options.onProgress)
                : await judgeBacklog(gateway.url);
          options.onProgress?.(`${shape} ${stream ? 'stream' : 'non-stream'} concurrency ${concurrency}: ${requests} requests per target`);
          const results: Record<keyof typeof targets, LoadResult[]> = { direct: [], passThrough: [], gateway: [] };
          // Alternating rounds per target, so a burst of noise does not land on one target only.
          for (let round = 0; round < (options.rounds ?? 2); round += 1) {
            for (const name of ['direct', 'passThrough', 'gateway'] as const) {
              run += 1;
              results[name].push(
                await runLoad({ baseUrl: targets[name], shape, stream, concurrency, requests: Math.ceil(requests / 2), runName: `r${run}` }),
              );
            }
          }
          const merged = (name: keyof typeof targets): LoadResult => ({
            requests: results[name].reduce((sum, result) => sum + result.requests, 0),
            errors: results[name].reduce((sum, result) => sum + result.errors, 0),
            latenciesMs: results[name].flatMap((result) => result.latenciesMs),
            durationMs: results[name].reduce((sum, result) => sum + result.durationMs, 0),
          });
          const direct = figures(merged('direct'));
          const passThrough = figures(merged('passThrough'));
          const gatewayFigures = figures(merged('gateway'));
          scenarios.push({
            shape,
            stream,
            concurrency,
            direct,
            passThrough,
            gateway: gatewayFigures,
            addedLatencyMs: { p50: round(gatewayFigures.p50Ms - direct.p50Ms), p99: round(gatewayFigures.p99Ms - direct.p99Ms) },
            throughputRatioVsPassthrough: round(gatewayFigures.requestsPerSecond / passThrough.requestsPerSecond),
            judgeBacklogAtStart,
          });
        }
      }
    }
    const headline =
      scenarios.find((scenario) => scenario.shape === 'agent' && scenario.stream && scenario.concurrency === 1) ?? scenarios[0];
    const loaded = scenarios.filter((scenario) => scenario.concurrency >= 32 && scenario.shape === 'agent');
    return {
      judgeLoad,
      addedLatencyMs: headline?.addedLatencyMs ?? { p50: Number.NaN, p99: Number.NaN },
      throughputRatioVsPassthrough: loaded.length > 0 ? Math.min(...loaded.map((scenario) => scenario.throughputRatioVsPassthrough)) : Number.NaN,
      scenarios,
      goal: { addedLatencyP50Ms: 1, throughputRatio: 0.8 },
    };
  } finally {
    await Promise.all(processes.map((started) => started.stop()));
    rmSync(data, { recursive: true, force: true });
  }
}
