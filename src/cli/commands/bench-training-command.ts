/** `clawrl bench training`: chat latency idle vs during training, in one run (src/lab/bench/training-latency-bench.ts). */
import { fileURLToPath } from 'node:url';
import { ClawrlError } from '../../spec/clawrl-error.js';
import {
  defaultTrainingLatencyBenchOptions,
  runTrainingLatencyBench,
  type TrainingLatencyBenchResult,
} from '../../lab/bench/training-latency-bench.js';

export function formatTrainingLatencyBench(result: TrainingLatencyBenchResult): string {
  const { idle, duringTraining: during } = result;
  return [
    `${result.model} (${result.trainParams}), ${result.cores} cores; non-streaming chat, one request at a time`,
    `idle             ${String(idle.requests).padStart(4)} requests  p50 ${idle.p50Ms} ms  p99 ${idle.p99Ms} ms`,
    `during training  ${String(during.requests).padStart(4)} requests  p50 ${during.p50Ms} ms  p99 ${during.p99Ms} ms  (${during.steps} steps, ${during.meanStepMs} ms each)`,
    `ratio            p50 ${result.ratio.p50}×  p99 ${result.ratio.p99}×  (goal p99 ≤ ${result.goal.p99Ratio}×)`,
  ].join('\n');
}

export async function runTrainingBenchCommand(options: { json: boolean; quick: boolean; model?: string; trainParams?: string }): Promise<void> {
  const trainParams = options.trainParams ?? 'lora';
  if (trainParams !== 'lora' && trainParams !== 'full') throw new ClawrlError('configuration_error', `--train-params must be lora or full, got ${trainParams}.`);
  const result = await runTrainingLatencyBench({
    ...defaultTrainingLatencyBenchOptions,
    ...(options.quick ? { samples: 24, batchSize: 8, idleRequests: 20 } : {}),
    serverScript: fileURLToPath(new URL('../main.js', import.meta.url)),
    model: options.model ?? defaultTrainingLatencyBenchOptions.model,
    trainParams,
    onProgress: (message) => process.stderr.write(`bench: ${message}\n`),
  });
  process.stdout.write(`${options.json ? JSON.stringify(result, null, 2) : formatTrainingLatencyBench(result)}\n`);
}
