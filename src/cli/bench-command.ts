/** `clawrl bench <gateway|engine|store>`: benchmarks that compare clawrl with a peer in the same run. */
import { ClawrlError } from '../spec/clawrl-error.js';
import { runEngineBench, type EngineBenchResult } from '../eval/bench/engine-bench.js';
import { defaultGatewayBenchOptions, runGatewayBench, type GatewayBenchResult } from '../eval/bench/gateway-bench.js';

export function formatGatewayBench(result: GatewayBenchResult): string {
  const lines = [
    `added latency vs direct (agent-shaped, streaming, concurrency 1): p50 ${result.addedLatencyMs.p50} ms, p99 ${result.addedLatencyMs.p99} ms (goal ≤ ${result.goal.addedLatencyP50Ms} ms p50)`,
    `throughput vs bare pass-through proxy (agent-shaped, concurrency ≥ 32, worst case): ${result.throughputRatioVsPassthrough}× (goal ≥ ${result.goal.throughputRatio}×)`,
    '',
    'shape  stream  conc  direct p50/p99 ms  pass-through p50/p99 ms  rps   gateway p50/p99 ms  rps   ratio',
  ];
  for (const scenario of result.scenarios) {
    lines.push(
      [
        scenario.shape.padEnd(6),
        String(scenario.stream).padEnd(7),
        String(scenario.concurrency).padEnd(5),
        `${scenario.direct.p50Ms}/${scenario.direct.p99Ms}`.padEnd(18),
        `${scenario.passThrough.p50Ms}/${scenario.passThrough.p99Ms}`.padEnd(24),
        String(scenario.passThrough.requestsPerSecond).padEnd(6),
        `${scenario.gateway.p50Ms}/${scenario.gateway.p99Ms}`.padEnd(19),
        String(scenario.gateway.requestsPerSecond).padEnd(6),
        String(scenario.throughputRatioVsPassthrough),
      ].join(' '),
    );
  }
  return lines.join('\n');
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

export async function runBenchCommand(target: string, options: { json: boolean; quick: boolean }): Promise<void> {
  if (target === 'engine') {
    const result = await runEngineBench({
      ...(options.quick ? { configNames: ['test-100k'] } : {}),
      onProgress: (message) => process.stderr.write(`bench: ${message}\n`),
    });
    process.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatEngineBench(result)}\n`);
    return;
  }
  if (target !== 'gateway') {
    throw new ClawrlError('configuration_error', `clawrl bench ${target} is not available in this version of clawrl yet; 'clawrl bench gateway' is.`);
  }
  const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
  const result = await runGatewayBench({
    ...defaultGatewayBenchOptions,
    ...(options.quick ? { concurrencies: [1, 4], requestsAt: () => 20 } : {}),
    onProgress: progress,
  });
  process.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatGatewayBench(result)}\n`);
}
